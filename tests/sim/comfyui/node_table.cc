#include "tests/sim/comfyui/node_table.h"

#include <functional>

namespace benchfleet::sim::comfyui {
namespace {

// KSampler's required inputs exactly as get_object_info_KSampler.json shows them.
constexpr const char* kKSamplerRequired = R"({
"model": ["MODEL", {"tooltip": "The model used for denoising the input latent."}],
"seed": ["INT", {"default": 0, "min": 0, "max": 18446744073709551615, "control_after_generate": true, "tooltip": "The random seed used for creating the noise."}],
"steps": ["INT", {"default": 20, "min": 1, "max": 10000, "tooltip": "The number of steps used in the denoising process."}],
"cfg": ["FLOAT", {"default": 8.0, "min": 0.0, "max": 100.0, "step": 0.1, "round": 0.01, "tooltip": "The Classifier-Free Guidance scale balances creativity and adherence to the prompt. Higher values result in images more closely matching the prompt however too high values will negatively impact quality."}],
"sampler_name": [["euler", "euler_cfg_pp", "euler_ancestral", "euler_ancestral_cfg_pp", "heun", "heunpp2", "dpm_2", "dpm_2_ancestral", "lms", "dpm_fast", "dpm_adaptive", "dpmpp_2s_ancestral", "dpmpp_2s_ancestral_cfg_pp", "dpmpp_sde", "dpmpp_sde_gpu", "dpmpp_2m", "dpmpp_2m_cfg_pp", "dpmpp_2m_sde", "dpmpp_2m_sde_gpu", "dpmpp_2m_sde_heun", "dpmpp_2m_sde_heun_gpu", "dpmpp_3m_sde", "dpmpp_3m_sde_gpu", "ddpm", "lcm", "ipndm", "ipndm_v", "deis", "res_multistep", "res_multistep_cfg_pp", "res_multistep_ancestral", "res_multistep_ancestral_cfg_pp", "gradient_estimation", "gradient_estimation_cfg_pp", "er_sde", "seeds_2", "seeds_3", "sa_solver", "sa_solver_pece", "ddim", "uni_pc", "uni_pc_bh2"], {"tooltip": "The algorithm used when sampling, this can affect the quality, speed, and style of the generated output."}],
"scheduler": [["simple", "sgm_uniform", "karras", "exponential", "ddim_uniform", "beta", "normal", "linear_quadratic", "kl_optimal"], {"tooltip": "The scheduler controls how noise is gradually removed to form the image."}],
"positive": ["CONDITIONING", {"tooltip": "The conditioning describing the attributes you want to include in the image."}],
"negative": ["CONDITIONING", {"tooltip": "The conditioning describing the attributes you want to exclude from the image."}],
"latent_image": ["LATENT", {"tooltip": "The latent image to denoise."}],
"denoise": ["FLOAT", {"default": 1.0, "min": 0.0, "max": 1.0, "step": 0.01, "tooltip": "The amount of denoising applied, lower values will maintain the structure of the initial image allowing for image to image sampling."}]
})";

// The other classes, after ComfyUI 0.3.64's nodes.py / comfy_extras (MAX_RESOLUTION 16384).
constexpr const char* kOtherClasses = R"({
"EmptyImage": {"out": ["IMAGE"], "in": {
  "width": ["INT", {"default": 512, "min": 1, "max": 16384, "step": 1}],
  "height": ["INT", {"default": 512, "min": 1, "max": 16384, "step": 1}],
  "batch_size": ["INT", {"default": 1, "min": 1, "max": 4096}],
  "color": ["INT", {"default": 0, "min": 0, "max": 16777215, "step": 1, "display": "color"}]}},
"ImageAddNoise": {"out": ["IMAGE"], "in": {
  "image": ["IMAGE", {}],
  "seed": ["INT", {"default": 0, "min": 0, "max": 18446744073709551615, "control_after_generate": true, "tooltip": "The random seed used for creating the noise."}],
  "strength": ["FLOAT", {"default": 0.5, "min": 0.0, "max": 1.0, "step": 0.01}]}},
"ImageScale": {"out": ["IMAGE"], "in": {
  "image": ["IMAGE", {}],
  "upscale_method": [["nearest-exact", "bilinear", "area", "bicubic", "lanczos"], {}],
  "width": ["INT", {"default": 512, "min": 0, "max": 16384, "step": 1}],
  "height": ["INT", {"default": 512, "min": 0, "max": 16384, "step": 1}],
  "crop": [["disabled", "center"], {}]}},
"ImageBlur": {"out": ["IMAGE"], "in": {
  "image": ["IMAGE", {}],
  "blur_radius": ["INT", {"default": 1, "min": 1, "max": 31, "step": 1}],
  "sigma": ["FLOAT", {"default": 1.0, "min": 0.1, "max": 10.0, "step": 0.1}]}},
"SaveImage": {"out": [], "output_node": true, "in": {
  "images": ["IMAGE", {"tooltip": "The images to save."}],
  "filename_prefix": ["STRING", {"default": "ComfyUI", "tooltip": "The prefix for the file to save. This may include formatting information such as %date:yyyy-MM-dd% or %Empty Latent Image.width% to include values from nodes."}]}},
"CLIPTextEncode": {"out": ["CONDITIONING"], "in": {
  "text": ["STRING", {"multiline": true, "dynamicPrompts": true, "tooltip": "The text to be encoded."}],
  "clip": ["CLIP", {"tooltip": "The CLIP model used for encoding the text."}]}},
"EmptyLatentImage": {"out": ["LATENT"], "in": {
  "width": ["INT", {"default": 512, "min": 16, "max": 16384, "step": 8, "tooltip": "The width of the latent images in pixels."}],
  "height": ["INT", {"default": 512, "min": 16, "max": 16384, "step": 8, "tooltip": "The height of the latent images in pixels."}],
  "batch_size": ["INT", {"default": 1, "min": 1, "max": 4096, "tooltip": "The number of latent images in the batch."}]}},
"VAEDecode": {"out": ["IMAGE"], "in": {
  "samples": ["LATENT", {"tooltip": "The latent to be decoded."}],
  "vae": ["VAE", {"tooltip": "The VAE model used for decoding the latent."}]}}
})";

Json Error(const std::string& type, const std::string& message, const std::string& details, Json extra) {
  Json e;
  e["type"] = type;
  e["message"] = message;
  e["details"] = details;
  e["extra_info"] = std::move(extra);
  return e;
}

std::string ListInfo(const Json& choices) {
  if (choices.size() > 20) return "(list of length " + std::to_string(choices.size()) + ")";
  return PyRepr(choices);
}

}  // namespace

NodeTable::NodeTable(std::vector<std::string> checkpoints) {
  NodeClass k{"KSampler", Json::parse(kKSamplerRequired), {"LATENT"}, false, Json::object()};
  k.info = {{"display_name", "KSampler"},
            {"description", "Uses the provided model, positive and negative conditioning to denoise the latent image."},
            {"python_module", "nodes"}, {"category", "sampling"}, {"output_tooltips", {"The denoised latent."}}};
  classes_[k.name] = k;
  const Json others = Json::parse(kOtherClasses);
  for (auto it = others.begin(); it != others.end(); ++it) {
    NodeClass c{it.key(), it.value()["in"], it.value()["out"].get<std::vector<std::string>>(),
                it.value().value("output_node", false), Json::object()};
    classes_[c.name] = c;
  }
  NodeClass ckpt{"CheckpointLoaderSimple", Json::object(), {"MODEL", "CLIP", "VAE"}, false, Json::object()};
  ckpt.required["ckpt_name"] = Json::array({Json(checkpoints), {{"tooltip", "The name of the checkpoint (model) to load."}}});
  classes_[ckpt.name] = ckpt;
}

const NodeClass* NodeTable::Find(const std::string& name) const {
  auto it = classes_.find(name);
  return it == classes_.end() ? nullptr : &it->second;
}

Json NodeTable::ObjectInfo(const std::string& name) const {
  Json out = Json::object();
  for (const auto& [n, c] : classes_) {
    if (!name.empty() && n != name) continue;
    Json j;
    j["input"] = {{"required", c.required}};
    Json order = Json::array();
    for (auto it = c.required.begin(); it != c.required.end(); ++it) order.push_back(it.key());
    j["input_order"] = {{"required", order}};
    j["output"] = c.outputs;
    j["output_is_list"] = std::vector<bool>(c.outputs.size(), false);
    j["output_name"] = c.outputs;
    j["name"] = n;
    j["display_name"] = c.info.value("display_name", n);
    j["description"] = c.info.value("description", "");
    j["python_module"] = c.info.value("python_module", "nodes");
    j["category"] = c.info.value("category", "");
    j["output_node"] = c.output_node;
    if (c.info.contains("output_tooltips")) j["output_tooltips"] = c.info["output_tooltips"];
    out[n] = j;
  }
  return out;
}

Validation ValidatePrompt(const NodeTable& table, const Json& prompt) {
  Validation v;
  v.prompt = prompt;
  auto fail = [&](Json error, Json node_errors) {
    v.ok = false;
    v.body = Json::object();
    v.body["error"] = std::move(error);
    v.body["node_errors"] = std::move(node_errors);
    v.log.push_back("invalid prompt: " + PyRepr(v.body["error"]));
  };
  if (!prompt.is_object()) {
    fail(Error("invalid_prompt", "Cannot execute because a node is missing the class_type property.", "Node ID '#'",
               Json::object()), Json::object());
    return v;
  }
  for (auto it = prompt.begin(); it != prompt.end(); ++it) {
    const Json& node = it.value();
    if (!node.is_object() || !node.contains("class_type") || !node["class_type"].is_string()) {
      fail(Error("invalid_prompt", "Cannot execute because a node is missing the class_type property.",
                 "Node ID '#" + it.key() + "'", Json::object()), Json::object());
      return v;
    }
    const std::string cls = node["class_type"].get<std::string>();
    if (table.Find(cls) == nullptr) {
      fail(Error("invalid_prompt", "Cannot execute because node " + cls + " does not exist.",
                 "Node ID '#" + it.key() + "'", Json::object()), Json::object());
      return v;
    }
  }
  for (auto it = prompt.begin(); it != prompt.end(); ++it) {
    if (table.Find(it.value()["class_type"].get<std::string>())->output_node) v.outputs.push_back(it.key());
  }
  if (v.outputs.empty()) {
    fail(Error("prompt_no_outputs", "Prompt has no outputs", "", Json::object()), Json::object());
    return v;
  }

  // validate_inputs, recursively from each output; a node's own errors are recorded after its
  // upstream nodes' (ComfyUI's order: node_errors "4", "5", "3" in the capture).
  struct Result {
    bool ok;
    Json errors;
  };
  std::vector<std::pair<std::string, Result>> validated;
  auto find = [&](const std::string& id) -> Result* {
    for (auto& [k, r] : validated) {
      if (k == id) return &r;
    }
    return nullptr;
  };
  std::function<bool(const std::string&)> validate = [&](const std::string& id) -> bool {
    if (Result* r = find(id)) return r->ok;
    const Json& node = prompt[id];
    const NodeClass* cls = table.Find(node["class_type"].get<std::string>());
    const Json inputs = node.value("inputs", Json::object());
    Json errors = Json::array();
    bool ok = true;
    for (auto in = cls->required.begin(); in != cls->required.end(); ++in) {
      const std::string& name = in.key();
      const Json& config = in.value();
      if (!inputs.contains(name)) {
        errors.push_back(Error("required_input_missing", "Required input is missing", name, {{"input_name", name}}));
        ok = false;
        continue;
      }
      const Json& val = inputs[name];
      if (val.is_array()) {  // a link [node_id, output_index]
        if (val.size() != 2 || !val[0].is_string() || !val[1].is_number_integer()) {
          errors.push_back(Error("bad_linked_input", "Bad linked input, must be a length-2 list of [string, int]",
                                 name, {{"input_name", name}, {"input_config", config}, {"received_value", val}}));
          ok = false;
          continue;
        }
        const std::string from = val[0].get<std::string>();
        if (!prompt.contains(from)) {
          errors.push_back(Error("bad_linked_input", "Bad linked input, must be a length-2 list of [string, int]",
                                 name, {{"input_name", name}, {"input_config", config}, {"received_value", val}}));
          ok = false;
          continue;
        }
        const NodeClass* up = table.Find(prompt[from]["class_type"].get<std::string>());
        const int idx = val[1].get<int>();
        const std::string received = idx >= 0 && idx < static_cast<int>(up->outputs.size()) ? up->outputs[idx] : "";
        const std::string wanted = config[0].is_string() ? config[0].get<std::string>() : "COMBO";
        if (received != wanted) {
          errors.push_back(Error("return_type_mismatch", "Return type mismatch between linked nodes",
                                 name + ", received_type(" + received + ") mismatch input_type(" + wanted + ")",
                                 {{"input_name", name}, {"input_config", config}, {"received_type", received},
                                  {"linked_node", val}}));
          ok = false;
          continue;
        }
        if (!validate(from)) ok = false;
        continue;
      }
      const Json& type = config[0];
      const Json opts = config.size() > 1 ? config[1] : Json::object();
      auto bad_type = [&](const std::string& t) {
        errors.push_back(Error("invalid_input_type", "Failed to convert an input value to a " + t + " value",
                               name + ", " + PyRepr(val), {{"input_name", name}, {"input_config", config},
                                                            {"received_value", val}}));
        ok = false;
      };
      if (type.is_array()) {
        bool found = false;
        for (const Json& c : type) found = found || c == val;
        if (!found) {
          errors.push_back(Error("value_not_in_list", "Value not in list",
                                 name + ": " + PyRepr(val) + " not in " + ListInfo(type),
                                 {{"input_name", name}, {"input_config", type.size() > 20 ? Json() : config},
                                  {"received_value", val}}));
          ok = false;
        }
        continue;
      }
      const std::string t = type.get<std::string>();
      if (t == "INT" || t == "FLOAT") {
        if (!val.is_number() || (t == "INT" && val.is_number_float())) {
          bad_type(t);
          continue;
        }
        const double d = val.get<double>();
        if (opts.contains("min") && d < opts["min"].get<double>()) {
          errors.push_back(Error("value_smaller_than_min",
                                 "Value " + PyRepr(val) + " smaller than min of " + PyRepr(opts["min"]), name,
                                 {{"input_name", name}, {"input_config", config}, {"received_value", val}}));
          ok = false;
        } else if (opts.contains("max") && d > opts["max"].get<double>()) {
          errors.push_back(Error("value_bigger_than_max",
                                 "Value " + PyRepr(val) + " bigger than max of " + PyRepr(opts["max"]), name,
                                 {{"input_name", name}, {"input_config", config}, {"received_value", val}}));
          ok = false;
        }
      } else if (t == "STRING") {
        // validate_inputs converts with str(val), which never fails: an int seed in a
        // filename_prefix becomes "42" (execution.py: `if input_type == "STRING": val = str(val)`).
        if (!val.is_string()) v.prompt[id]["inputs"][name] = PyRepr(val);
      } else {
        // A model/conditioning/image input needs a link.
        errors.push_back(Error("bad_linked_input", "Bad linked input, must be a length-2 list of [string, int]",
                               name, {{"input_name", name}, {"input_config", config}, {"received_value", val}}));
        ok = false;
      }
    }
    validated.emplace_back(id, Result{ok && errors.empty(), errors});
    return ok && errors.empty();
  };

  Json node_errors = Json::object();
  std::vector<std::string> good_outputs;
  for (const std::string& out : v.outputs) {
    const size_t before = validated.size();
    (void)before;
    if (validate(out)) {
      good_outputs.push_back(out);
      continue;
    }
    const std::string cls = prompt[out]["class_type"].get<std::string>();
    v.log.push_back("Failed to validate prompt for output " + out + ":");
    for (auto& [id, r] : validated) {
      if (r.ok || r.errors.empty()) continue;
      if (!node_errors.contains(id)) {
        node_errors[id]["errors"] = r.errors;
        node_errors[id]["dependent_outputs"] = Json::array();
        node_errors[id]["class_type"] = prompt[id]["class_type"];
      }
      Json& deps = node_errors[id]["dependent_outputs"];
      bool has = false;
      for (const Json& d : deps) has = has || d == out;
      if (!has) deps.push_back(out);
      v.log.push_back("* " + prompt[id]["class_type"].get<std::string>() + " " + id + ":");
      for (const Json& e : r.errors) {
        v.log.push_back("  - " + e["message"].get<std::string>() + ": " + e["details"].get<std::string>());
      }
    }
    v.log.push_back("Output will be ignored");
  }
  if (good_outputs.empty()) {
    std::vector<std::string> log = v.log;
    fail(Error("prompt_outputs_failed_validation", "Prompt outputs failed validation", "", Json::object()),
         node_errors);
    log.push_back(v.log.back());
    v.log = log;
    return v;
  }
  v.ok = true;
  v.outputs = good_outputs;
  return v;
}

}  // namespace benchfleet::sim::comfyui
