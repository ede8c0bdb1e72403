#include "tests/sim/llama_server/memory_layout.h"

#include <algorithm>
#include <array>
#include <fstream>
#include <sstream>

#include "tests/sim/llama_server/sim_log.h"
#include "tests/sim/llama_server/token_model.h"

namespace benchfleet::sim {
namespace {

// Token embeddings stay in host memory when layers are offloaded (llama.cpp keeps tok_embd on
// the CPU): the captured model's 32000 x 64 F16 matrix, at most half the model.
int64_t EmbeddingBytes(int64_t model_bytes) {
  return std::min<int64_t>(int64_t{kVocabSize} * kNEmbd * 2, model_bytes / 2);
}

// Bytes per element of a KV cache type (ggml block sizes / 32 elements).
double BytesPerElement(const std::string& type) {
  if (type == "f32") return 4;
  if (type == "q8_0") return 34.0 / 32;
  if (type == "q4_0" || type == "iq4_nl") return 18.0 / 32;
  if (type == "q4_1") return 20.0 / 32;
  if (type == "q5_0") return 22.0 / 32;
  if (type == "q5_1") return 24.0 / 32;
  return 2;  // f16, bf16
}

// The compute buffers, scaled with the physical batch from the capture's 0.63 MiB at 256.
int64_t ComputeBytes(uint32_t n_ubatch) { return int64_t{n_ubatch} * 2580; }
int64_t HostComputeBytes(uint32_t n_ubatch) { return int64_t{n_ubatch} * kNEmbd * 8; }

double Mib(int64_t bytes) { return static_cast<double>(bytes) / 1024.0 / 1024.0; }

std::string Strip(const std::string& desc) {
  std::string d = desc;
  for (const char* prefix : {"NVIDIA ", "GeForce ", "Tesla ", "AMD ", "Radeon ", "Instinct "}) {
    const std::string p = prefix;
    if (d.compare(0, p.size(), p) == 0) d = d.substr(p.size());
  }
  return d;
}

}  // namespace

DeviceSpec GpuSpec(const std::string& name, int64_t memory_mib) {
  DeviceSpec d;
  d.name = name;
  int64_t total_mib = 24564;
  int64_t used_mib = 484;  // what the desktop and the driver hold before llama-server starts
  if (name.rfind("CUDA", 0) == 0) {
    d.description = "NVIDIA GeForce RTX 4090";
    d.host_buffer = "CUDA_Host";
    d.pci = "0000:01:00.0";
  } else if (name.rfind("ROCm", 0) == 0) {
    d.description = "AMD Radeon RX 7900 XTX";
    d.host_buffer = "ROCm_Host";
    d.pci = "0000:03:00.0";
    total_mib = 24560;
    used_mib = 312;
  } else if (name.rfind("Vulkan", 0) == 0) {
    d.description = "NVIDIA GeForce RTX 3080 Ti";
    d.host_buffer = "Vulkan_Host";
    d.pci = "0000:01:00.0";
    total_mib = 12288;
    used_mib = 976;
  } else {  // Metal: unified memory, the host buffers are plain CPU buffers
    d.description = "Apple M2 Max";
    d.host_buffer = "CPU";
    total_mib = 49152;
    used_mib = 0;
  }
  if (memory_mib > 0) total_mib = memory_mib;
  used_mib = std::min(used_mib, total_mib / 8);
  d.total_bytes = total_mib * kMiB;
  d.free_bytes = (total_mib - used_mib) * kMiB;
  return d;
}

HostInfo ReadHostInfo() {
  HostInfo h;
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) == 0) {
      const size_t colon = line.find(':');
      if (colon != std::string::npos) {
        h.cpu_name = line.substr(line.find_first_not_of(" \t", colon + 1));
        break;
      }
    }
  }
  if (h.cpu_name.empty()) h.cpu_name = "CPU";
  std::ifstream meminfo("/proc/meminfo");
  for (std::string line; std::getline(meminfo, line);) {
    if (line.rfind("MemTotal:", 0) == 0) {
      std::istringstream in(line.substr(9));
      int64_t kib = 0;
      in >> kib;
      h.total_bytes = kib * 1024;
    }
  }
  return h;
}

MemoryLayout ComputeLayout(const SimOptions& o) {
  MemoryLayout m;
  m.gpu_build = o.sim_gpu_device != "none";
  if (m.gpu_build) m.gpu = GpuSpec(o.sim_gpu_device, o.sim_gpu_memory_mib);
  m.n_gpu_layers_requested = o.n_gpu_layers < 0 ? 999 : o.n_gpu_layers;
  // llama.cpp's fit step changes n_gpu_layers only when the user left it at its default (auto):
  // an explicit -ngl makes it stop ("n_gpu_layers already set by user").
  if (m.gpu_build && !o.device_none && o.n_gpu_layers < 0 && o.sim_fit_gpu_layers >= 0 &&
      o.sim_fit_gpu_layers < kNLayer + 1) {
    m.n_gpu_layers_requested = o.sim_fit_gpu_layers;
    m.fit_reduced_layers = true;
  }
  m.n_gpu_layers_used =
      (m.gpu_build && !o.device_none) ? std::min(m.n_gpu_layers_requested, kNLayer + 1) : 0;
  m.n_ctx = static_cast<uint32_t>(o.ctx_size > 0 ? o.ctx_size : kNCtxTrain);
  m.n_seq = static_cast<uint32_t>(o.n_parallel > 0 ? o.n_parallel : 4);
  m.kv_unified = o.n_parallel < 0 || o.kv_unified;
  m.n_ctx_seq = m.kv_unified ? m.n_ctx : m.n_ctx / m.n_seq;
  m.n_batch = std::min<uint32_t>(m.n_ctx, static_cast<uint32_t>(std::max(1, o.n_batch)));
  m.n_ubatch = std::min<uint32_t>(m.n_batch, static_cast<uint32_t>(std::max(1, o.n_ubatch)));
  m.type_k = o.cache_type_k;
  m.type_v = o.cache_type_v;

  m.model_bytes = std::max<int64_t>(0, o.sim_model_bytes);
  // llama.cpp puts the last n_gpu_layers repeating layers on the GPU, and the output layer too
  // once n_gpu_layers exceeds the layer count.
  const int repeating_on_gpu = std::min(m.n_gpu_layers_used, kNLayer);
  const int output_on_gpu = m.n_gpu_layers_used > kNLayer ? 1 : 0;
  const int64_t offloadable = m.model_bytes - EmbeddingBytes(m.model_bytes);
  m.model_dev = offloadable * (repeating_on_gpu + output_on_gpu) / (kNLayer + 1);
  m.model_host = m.model_bytes - m.model_dev;

  const double cells = static_cast<double>(m.n_ctx) * kNLayer * kNEmbd;
  m.k_bytes = static_cast<int64_t>(cells * BytesPerElement(m.type_k));
  m.v_bytes = static_cast<int64_t>(cells * BytesPerElement(m.type_v));
  m.kv_dev = (m.k_bytes + m.v_bytes) * repeating_on_gpu / kNLayer;
  m.kv_host = m.k_bytes + m.v_bytes - m.kv_dev;

  m.output_bytes = int64_t{m.n_seq} * kVocabSize * 4;
  if (m.offloaded()) {
    m.compute_dev = ComputeBytes(m.n_ubatch);
    m.compute_host = HostComputeBytes(m.n_ubatch);
  } else {
    m.compute_host = ComputeBytes(m.n_ubatch);
  }
  return m;
}

std::vector<std::string> FitLayerLines(const MemoryLayout& m, int64_t context_size_given) {
  if (!m.fit_reduced_layers) return {};
  std::vector<std::string> lines;
  if (context_size_given > 0) {
    lines.push_back(Format("common_params_fit_impl: context size set by user to %lld -> no change",
                           static_cast<long long>(context_size_given)));
  }
  lines.push_back("common_params_fit_impl: filling dense layers back-to-front:");
  const int64_t used_mib = (m.model_dev + m.kv_dev + m.compute_dev) / kMiB;
  lines.push_back(Format("common_params_fit_impl:   - %s: %2d layers, %6lld MiB used, %6lld MiB free", m.gpu.name.c_str(),
                         m.n_gpu_layers_used, static_cast<long long>(used_mib),
                         static_cast<long long>(m.gpu.free_bytes / kMiB - used_mib)));
  return lines;
}

std::vector<std::string> ModelBufferLines(const MemoryLayout& m) {
  std::vector<std::string> lines;
  if (m.gpu_build && m.n_gpu_layers_used > 0) {
    // llama-model.cpp's wording, including its count of "repeating" layers.
    const int n_gpu = std::min(m.n_gpu_layers_requested, kNLayer);
    int n_repeating = n_gpu;
    if (n_repeating > 0) {
      lines.push_back("load_tensors: offloading output layer to GPU");
      n_repeating--;
    }
    lines.push_back(Format("load_tensors: offloading %d repeating layers to GPU", n_repeating));
    lines.push_back(Format("load_tensors: offloaded %d/%d layers to GPU",
                           std::min(m.n_gpu_layers_requested, kNLayer + 1), kNLayer + 1));
  } else if (m.gpu_build) {
    lines.push_back("load_tensors: offloading 0 repeating layers to GPU");
    lines.push_back(Format("load_tensors: offloaded 0/%d layers to GPU", kNLayer + 1));
  }
  lines.push_back(Format("load_tensors: %12s model buffer size = %8.2f MiB", "CPU_Mapped", Mib(m.model_host)));
  if (m.model_dev > 0) {
    lines.push_back(Format("load_tensors: %12s model buffer size = %8.2f MiB", m.gpu.name.c_str(), Mib(m.model_dev)));
  }
  return lines;
}

std::string OutputBufferLine(const MemoryLayout& m) {
  return Format("llama_context: %10s  output buffer size = %8.2f MiB", m.host_buffer().c_str(),
                Mib(m.output_bytes));
}

std::vector<std::string> KvBufferLines(const MemoryLayout& m) {
  std::vector<std::string> lines;
  if (m.kv_dev > 0) {
    lines.push_back(Format("llama_kv_cache: %10s KV buffer size = %8.2f MiB", m.gpu.name.c_str(), Mib(m.kv_dev)));
  }
  if (m.kv_host > 0) {
    lines.push_back(Format("llama_kv_cache: %10s KV buffer size = %8.2f MiB", "CPU", Mib(m.kv_host)));
  }
  lines.push_back(Format(
      "llama_kv_cache: size = %7.2f MiB (%6u cells, %3d layers, %2u/%u seqs), K (%s): %7.2f MiB, V (%s): %7.2f MiB",
      Mib(m.k_bytes + m.v_bytes), m.n_ctx, kNLayer, m.n_seq, m.kv_unified ? 1u : m.n_seq,
      m.type_k.c_str(), Mib(m.k_bytes), m.type_v.c_str(), Mib(m.v_bytes)));
  return lines;
}

std::vector<std::string> ComputeBufferLines(const MemoryLayout& m) {
  std::vector<std::string> lines;
  if (m.compute_dev > 0) {
    lines.push_back(Format("sched_reserve: %10s compute buffer size = %8.2f MiB", m.gpu.name.c_str(), Mib(m.compute_dev)));
  }
  lines.push_back(Format("sched_reserve: %10s compute buffer size = %8.2f MiB", m.host_buffer().c_str(),
                         Mib(m.compute_host)));
  return lines;
}

std::vector<std::string> BreakdownTable(const MemoryLayout& m, bool after_load) {
  // common/common.cpp common_memory_breakdown_print: the same templates, columns padded to the
  // widest cell, the name left-aligned and the numbers right-aligned.
  const std::string kHeader = "%s: | %s | %s   %s    %s   %s   %s   %s    %s |";
  const std::string kGpu = "%s: | %s | %s = %s + (%s = %s + %s + %s) + %s |";
  const std::string kOther = "%s: | %s | %s   %s    %s = %s + %s + %s    %s |";
  std::vector<std::array<std::string, 9>> rows;
  rows.push_back({kHeader, "memory breakdown [MiB]", "total", "free", "self", "model", "context",
                  "compute", "unaccounted"});
  if (m.offloaded()) {
    const int64_t self = m.model_dev + m.kv_dev + m.compute_dev;
    const int64_t free = after_load ? m.gpu.free_bytes - self : m.gpu.free_bytes;
    const int64_t unaccounted = m.gpu.total_bytes - free - self;
    rows.push_back({kGpu, "  - " + m.gpu.name + " (" + Strip(m.gpu.description) + ")",
                    std::to_string(m.gpu.total_bytes / kMiB), std::to_string(free / kMiB),
                    std::to_string(self / kMiB), std::to_string(m.model_dev / kMiB),
                    std::to_string(m.kv_dev / kMiB), std::to_string(m.compute_dev / kMiB),
                    std::to_string(unaccounted / kMiB)});
  }
  const int64_t host_self = m.model_host + m.kv_host + m.compute_host;
  rows.push_back({kOther, "  - Host", "", "", std::to_string(host_self / kMiB),
                  std::to_string(m.model_host / kMiB), std::to_string(m.kv_host / kMiB),
                  std::to_string(m.compute_host / kMiB), ""});
  for (size_t j = 1; j < rows[0].size(); j++) {
    size_t width = 0;
    for (const auto& r : rows) width = std::max(width, r[j].size());
    for (auto& r : rows) r[j].insert(j == 1 ? r[j].size() : 0, width - r[j].size(), ' ');
  }
  std::vector<std::string> lines;
  for (const auto& r : rows) {
    lines.push_back(Format(r[0].c_str(), "common_memory_breakdown_print", r[1].c_str(), r[2].c_str(),
                           r[3].c_str(), r[4].c_str(), r[5].c_str(), r[6].c_str(), r[7].c_str(),
                           r[8].c_str()));
  }
  return lines;
}

std::vector<std::string> FitVerdictLines(const MemoryLayout& m, const HostInfo& host) {
  if (m.offloaded()) {
    const int64_t self = m.model_dev + m.kv_dev + m.compute_dev;
    return {Format("common_params_fit_impl: projected to use %lld MiB of device memory vs. %lld MiB of free device memory",
                   static_cast<long long>(self / kMiB), static_cast<long long>(m.gpu.free_bytes / kMiB)),
            Format("common_params_fit_impl: will leave %lld >= 1024 MiB of free device memory, no changes needed",
                   static_cast<long long>((m.gpu.free_bytes - self) / kMiB))};
  }
  const int64_t self = m.model_host + m.kv_host + m.compute_host;
  return {Format("common_params_fit_impl: projected to use %lld MiB of host memory vs. %lld MiB of total host memory",
                 static_cast<long long>(self / kMiB), static_cast<long long>(host.total_bytes / kMiB)),
          Format("common_params_fit_impl: will leave %lld >= 1024 MiB of system memory, no changes needed",
                 static_cast<long long>((host.total_bytes - self) / kMiB))};
}

}  // namespace benchfleet::sim
