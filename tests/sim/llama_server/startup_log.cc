#include "tests/sim/llama_server/startup_log.h"

#include <algorithm>
#include <thread>

namespace benchfleet::sim {
namespace {

int HardwareThreads() { return std::max(1u, std::thread::hardware_concurrency()); }

// The tiny model's metadata as llama_model_loader dumped it; context_length is the simulated
// model's 4096 (the captured one was trained for 256).
const char* const kMetadataLines[] = {
    "llama_model_loader: - kv   0:                       general.architecture str              = llama",
    "llama_model_loader: - kv   1:                               general.name str              = tiny-random-llama",
    "llama_model_loader: - kv   2:                          llama.block_count u32              = 2",
    "llama_model_loader: - kv   3:                       llama.context_length u32              = 4096",
    "llama_model_loader: - kv   4:                     llama.embedding_length u32              = 64",
    "llama_model_loader: - kv   5:                  llama.feed_forward_length u32              = 128",
    "llama_model_loader: - kv   6:                 llama.attention.head_count u32              = 4",
    "llama_model_loader: - kv   7:              llama.attention.head_count_kv u32              = 4",
    "llama_model_loader: - kv   8:     llama.attention.layer_norm_rms_epsilon f32              = 0.000010",
    "llama_model_loader: - kv   9:                 llama.rope.dimension_count u32              = 16",
    "llama_model_loader: - kv  10:                       llama.rope.freq_base f32              = 10000.000000",
    "llama_model_loader: - kv  11:                           llama.vocab_size u32              = 32000",
    "llama_model_loader: - kv  12:                          general.file_type u32              = 1",
    "llama_model_loader: - kv  13:                       tokenizer.ggml.model str              = llama",
    "llama_model_loader: - kv  14:                         tokenizer.ggml.pre str              = default",
    "llama_model_loader: - kv  15:                      tokenizer.ggml.tokens arr[str,32000]   = [\"<unk>\", \"<s>\", \"</s>\", \"<0x00>\", \"<...",
    "llama_model_loader: - kv  16:                      tokenizer.ggml.scores arr[f32,32000]   = [0.000000, 0.000000, 0.000000, 0.0000...",
    "llama_model_loader: - kv  17:                  tokenizer.ggml.token_type arr[i32,32000]   = [2, 3, 3, 6, 6, 6, 6, 6, 6, 6, 6, 6, ...",
    "llama_model_loader: - kv  18:                tokenizer.ggml.bos_token_id u32              = 1",
    "llama_model_loader: - kv  19:                tokenizer.ggml.eos_token_id u32              = 2",
    "llama_model_loader: - kv  20:            tokenizer.ggml.unknown_token_id u32              = 0",
    "llama_model_loader: - kv  21:               tokenizer.ggml.add_bos_token bool             = true",
    "llama_model_loader: - kv  22:               tokenizer.ggml.add_eos_token bool             = false",
    "llama_model_loader: - type  f32:    5 tensors",
    "llama_model_loader: - type  f16:   16 tensors",
    "print_info: file format = GGUF V3 (latest)",
    "print_info: file type   = F16",
};

const char* const kVocabLines[] = {
    "load: 0 unused tokens",
    "load: printing all EOG tokens:",
    "load:   - 2 ('</s>')",
    "load: special tokens cache size = 3",
    "load: token to piece cache size = 0.1684 MB",
    "print_info: arch                  = llama",
    "print_info: vocab_only            = 0",
    "print_info: no_alloc              = 0",
    "print_info: n_ctx_train           = 4096",
    "print_info: n_embd_inp            = 64",
    "print_info: n_embd                = 64",
    "print_info: n_embd_out            = 64",
    "print_info: n_layer               = 2",
    "print_info: n_layer_all           = 2",
    "print_info: n_head                = 4",
    "print_info: n_head_kv             = 4",
    "print_info: n_rot                 = 16",
    "print_info: n_swa                 = 0",
    "print_info: is_swa_any            = 0",
    "print_info: n_embd_head_k         = 16",
    "print_info: n_embd_head_v         = 16",
    "print_info: n_gqa                 = 1",
    "print_info: n_embd_k_gqa          = 64",
    "print_info: n_embd_v_gqa          = 64",
    "print_info: f_norm_eps            = 0.0e+00",
    "print_info: f_norm_rms_eps        = 1.0e-05",
    "print_info: f_clamp_kqv           = 0.0e+00",
    "print_info: f_max_alibi_bias      = 0.0e+00",
    "print_info: f_logit_scale         = 0.0e+00",
    "print_info: f_attn_scale          = 0.0e+00",
    "print_info: f_attn_value_scale    = 0.0000",
    "print_info: n_ff                  = 128",
    "print_info: n_expert              = 0",
    "print_info: n_expert_used         = 0",
    "print_info: n_expert_groups       = 0",
    "print_info: n_group_used          = 0",
    "print_info: causal attn           = 1",
    "print_info: pooling type          = -1",
    "print_info: rope type             = 0",
    "print_info: rope scaling          = linear",
    "print_info: freq_base_train       = 10000.0",
    "print_info: freq_scale_train      = 1",
    "print_info: n_ctx_orig_yarn       = 4096",
    "print_info: rope_yarn_log_mul     = 0.0000",
    "print_info: rope_finetuned        = unknown",
    "print_info: model type            = ?B",
};

const char* const kVocabTailLines[] = {
    "print_info: general.name          = tiny-random-llama",
    "print_info: vocab type            = SPM",
    "print_info: n_vocab               = 32000",
    "print_info: n_merges              = 0",
    "print_info: BOS token             = 1 '<s>'",
    "print_info: EOS token             = 2 '</s>'",
    "print_info: UNK token             = 0 '<unk>'",
    "print_info: LF token              = 13 '<0x0A>'",
    "print_info: EOG token             = 2 '</s>'",
    "print_info: max token length      = 48",
};

const char* const kFusedOpsLines[] = {
    "resolve_fused_ops: Flash Attention enabled",
    "resolve_fused_ops: resolving fused Gated Delta Net support:",
    "resolve_fused_ops: fused Gated Delta Net (autoregressive) enabled",
    "resolve_fused_ops: fused Gated Delta Net (chunked) enabled",
    "resolve_fused_ops: resolving fused Lightning Indexer support:",
    "resolve_fused_ops: Lightning Indexer enabled",
    "resolve_fused_ops: resolving fused DeepSeek V4 HC support:",
    "resolve_fused_ops: fused DeepSeek V4 HC pre enabled",
    "resolve_fused_ops: fused DeepSeek V4 HC comb enabled",
    "resolve_fused_ops: fused DeepSeek V4 HC post enabled",
};

std::string ParamsText(int64_t n) {
  const double v = static_cast<double>(n);
  if (v >= 1e12) return Format("%.2f T", v / 1e12);
  if (v >= 1e9) return Format("%.2f B", v / 1e9);
  if (v >= 1e6) return Format("%.2f M", v / 1e6);
  return Format("%.2f K", v / 1e3);
}

}  // namespace

std::string BuildInfo() { return "b" + std::to_string(kBuildNumber) + "-" + kBuildCommit; }

std::string CompilerName() {
#if defined(__clang__)
  return Format("Clang %d.%d.%d", __clang_major__, __clang_minor__, __clang_patchlevel__);
#else
  return Format("GNU %d.%d.%d", __GNUC__, __GNUC_MINOR__, __GNUC_PATCHLEVEL__);
#endif
}

std::string TargetName() {
#if defined(__x86_64__)
  return "Linux x86_64";
#elif defined(__aarch64__)
  return "Linux aarch64";
#else
  return "Linux unknown";
#endif
}

void StartupLog::Preamble() {
  if (!m_.gpu_build && o_.n_gpu_layers_given) {
    // Printed by the argument parser of a CPU-only build, before the logger starts.
    log_.Raw(
        "warning: no usable GPU found, --gpu-layers option will be ignored\n"
        "warning: one possible reason is that llama.cpp was compiled without GPU support\n"
        "warning: consult docs/build.md for compilation instructions\n");
  }
  if (m_.gpu_build && (m_.gpu.name.rfind("CUDA", 0) == 0 || m_.gpu.name.rfind("ROCm", 0) == 0)) {
    // ggml's CUDA/HIP backend announces its devices on stderr when it loads, before the logger
    // (ggml-cuda.cu's ggml_cuda_init wording; written from its source, not captured).
    const bool rocm = m_.gpu.name.rfind("ROCm", 0) == 0;
    log_.Raw(Format("ggml_cuda_init: found 1 %s devices:\n", rocm ? "ROCm" : "CUDA"));
    log_.Raw(Format(rocm ? "  Device 0: %s, gfx1100 (0x1100), VMM: no, Wave Size: 32\n"
                         : "  Device 0: %s, compute capability 8.9, VMM: yes\n",
                    m_.gpu.description.c_str()));
  }
  for (const std::string& d : o_.deprecations) log_.Raw(d + "\n");
  const int threads = o_.n_threads > 0 ? o_.n_threads : HardwareThreads();
  // The real server prints the build line only from -lv 4 on; the simulator prints it always so
  // that every log says SIMULATED.
  log_.Info(Format("cmn  common_param: common_params_print_info: build %d (%s) with %s for %s", kBuildNumber,
                   kBuildCommit, CompilerName().c_str(), TargetName().c_str()));
  log_.Info(Format("cmn  common_param: common_params_print_info: verbosity = %d (adjust with the `-lv N` CLI arg)",
                   o_.verbosity));
  log_.Verbose("cmn  common_param: device_info:");
  if (m_.gpu_build) {
    log_.Verbose(Format("cmn  common_param:   - %-8s: %s (%lld MiB, %lld MiB free)", m_.gpu.name.c_str(),
                        m_.gpu.description.c_str(), static_cast<long long>(m_.gpu.total_bytes / kMiB),
                        static_cast<long long>(m_.gpu.free_bytes / kMiB)));
  }
  log_.Verbose(Format("cmn  common_param:   - %-8s: %s (%lld MiB, %lld MiB free)", "CPU", host_.cpu_name.c_str(),
                      static_cast<long long>(host_.total_bytes / kMiB),
                      static_cast<long long>(host_.total_bytes / kMiB)));
  log_.Verbose(Format(
      "cmn  common_param: system_info: n_threads = %d (n_threads_batch = %d) / %d | CPU : SSE3 = 1 | SSSE3 = 1 | "
      "AVX = 1 | AVX_VNNI = 1 | AVX2 = 1 | F16C = 1 | FMA = 1 | BMI2 = 1 | AVX512 = 1 | AVX512_VBMI = 1 | "
      "AVX512_VNNI = 1 | AVX512_BF16 = 1 | LLAMAFILE = 1 | OPENMP = 1 | REPACK = 1 | ",
      threads, threads, HardwareThreads()));
  if (o_.n_parallel < 0) {
    log_.Verbose("srv  llama_server: n_parallel is set to auto, using n_parallel = 4 and kv_unified = true");
  }
  const int http_threads = o_.n_threads_http > 0 ? o_.n_threads_http : std::max(8, HardwareThreads() - 1);
  log_.Verbose(Format("srv          init: using %d threads for HTTP server", http_threads));
  log_.Warn("srv  llama_server: -----------------");
  log_.Warn("srv  llama_server: CORS is set to allow all origins ('*') and no API key is set");
  log_.Warn("srv  llama_server: this can be a security risk (cross-origin attacks)");
  log_.Warn("srv  llama_server: more info: https://github.com/ggml-org/llama.cpp/pull/25655");
  log_.Warn("srv  llama_server: -----------------");
  log_.Verbose("srv         start: binding port with default address family");
}

void StartupLog::BindFailed() {
  log_.Error(Format("srv         start: couldn't bind HTTP server socket, hostname: %s, port: %d", o_.host.c_str(),
                    o_.port));
  log_.Info("srv    operator(): operator(): cleaning up before exit...");
  log_.Error("srv  llama_server: exiting due to HTTP server error");
}

void StartupLog::LoadBegins() {
  log_.Info(Format("srv    load_model: loading model '%s'", o_.model_path.c_str()));
  log_.Verbose(Format("srv    load_model: local path '%s'", o_.model_path.c_str()));
  log_.Verbose("cmn  common_init_: fitting params to device memory ...");
  log_.Verbose(
      "cmn  common_init_: (for bugs during this step try to reproduce them with -fit off, or provide --verbose "
      "logs if the bug only occurs with -fit on)");
  log_.Verbose("common_params_fit_impl: getting device memory data for initial parameters:");
}

void StartupLog::LoaderMetadata() {
  for (const std::string& line : BreakdownTable(m_, /*after_load=*/false)) log_.Verbose(line);
  if (m_.fit_reduced_layers) {
    for (const std::string& line : FitLayerLines(m_, o_.ctx_size)) log_.Verbose(line);
  } else {
    for (const std::string& line : FitVerdictLines(m_, host_)) log_.Verbose(line);
  }
  log_.Verbose("common_fit_params: successfully fit params to free device memory");
  log_.Verbose("common_fit_params: fitting params to free memory took 0.03 seconds");
  if (m_.offloaded()) {
    const std::string pci = m_.gpu.pci.empty() ? "" : " (" + m_.gpu.pci + ")";
    log_.Verbose(Format("llama_prepare_model_devices: using device %s (%s)%s - %lld MiB free", m_.gpu.name.c_str(),
                        m_.gpu.description.c_str(), pci.c_str(),
                        static_cast<long long>(m_.gpu.free_bytes / kMiB)));
  }
  log_.Verbose(Format(
      "llama_model_loader: loaded meta data with 23 key-value pairs and 21 tensors from %s (version GGUF V3 (latest))",
      o_.model_path.c_str()));
  log_.Verbose("llama_model_loader: Dumping metadata keys/values. Note: KV overrides do not apply in this output.");
  for (const char* line : kMetadataLines) log_.Verbose(line);
  const int64_t params = std::max<int64_t>(1, m_.model_bytes / 2);  // F16
  const double bpw = static_cast<double>(m_.model_bytes) * 8.0 / static_cast<double>(params);
  if (m_.model_bytes < 1024 * kMiB) {
    log_.Verbose(Format("print_info: file size   = %.2f MiB (%.2f BPW) ",
                        static_cast<double>(m_.model_bytes) / kMiB, bpw));
  } else {
    log_.Verbose(Format("print_info: file size   = %.2f GiB (%.2f BPW) ",
                        static_cast<double>(m_.model_bytes) / kMiB / 1024.0, bpw));
  }
  for (const char* line : kVocabLines) log_.Verbose(line);
  log_.Verbose("print_info: model params          = " + ParamsText(params));
  for (const char* line : kVocabTailLines) log_.Verbose(line);
  log_.Verbose("load_tensors: loading model tensors, this can take a while... (load_mode = mmap)");
}

void StartupLog::LoadCompletes(const std::string& listening_url) {
  for (const std::string& line : ModelBufferLines(m_)) log_.Verbose(line);
  log_.Verbose("cmn  common_init_: added </s> logit bias = -inf");
  log_.Verbose("llama_context: constructing llama_context");
  log_.Verbose(Format("llama_context: n_seq_max             = %u", m_.n_seq));
  log_.Verbose(Format("llama_context: n_ctx                 = %u", m_.n_ctx));
  log_.Verbose(Format("llama_context: n_ctx_seq             = %u", m_.n_ctx_seq));
  log_.Verbose(Format("llama_context: n_batch               = %u", m_.n_batch));
  log_.Verbose(Format("llama_context: n_ubatch              = %u", m_.n_ubatch));
  log_.Verbose("llama_context: causal_attn           = 1");
  log_.Verbose("llama_context: flash_attn            = auto");
  log_.Verbose(Format("llama_context: kv_unified            = %s", m_.kv_unified ? "true" : "false"));
  log_.Verbose("llama_context: freq_base             = 10000.0");
  log_.Verbose("llama_context: freq_scale            = 1");
  log_.Verbose("llama_context: n_rs_seq              = 0");
  log_.Verbose(Format("llama_context: n_outputs_max         = %u", m_.n_seq));
  log_.Verbose("llama_context: n_outputs_max_per_seq = 1");
  if (m_.n_ctx_seq > static_cast<uint32_t>(kNCtxTrain)) {
    log_.Line('W', kLogVerbose,
              Format("llama_context: n_ctx_seq (%u) > n_ctx_train (%d) -- possible training context overflow",
                     m_.n_ctx_seq, kNCtxTrain));
  }
  log_.Verbose(OutputBufferLine(m_));
  for (const std::string& line : KvBufferLines(m_)) log_.Verbose(line);
  log_.Verbose("llama_kv_cache: attn_rot_k = 0, n_embd_head_k_all = 16");
  log_.Verbose("llama_kv_cache: attn_rot_v = 0, n_embd_head_k_all = 16");
  log_.Verbose("sched_reserve: reserving ...");
  for (const char* line : kFusedOpsLines) log_.Verbose(line);
  for (const std::string& line : ComputeBufferLines(m_)) log_.Verbose(line);
  log_.Verbose("sched_reserve: graph nodes  = 68");
  log_.Verbose(Format("sched_reserve: graph splits = %d", m_.offloaded() ? 2 : 1));
  log_.Verbose("sched_reserve: reserve took 0.67 ms, sched copies = 1");
  const int threads = o_.n_threads > 0 ? o_.n_threads : HardwareThreads();
  log_.Info(Format("cmn          init: llama threadpool init, n_threads = %d", threads));
  log_.Verbose("cmn  common_init_: warming up the model with an empty run - please wait ... (--no-warmup to disable)");
  log_.Info(Format("srv    load_model: initializing, n_slots = %u, n_ctx_slot = %u, kv_unified = '%s'", m_.n_seq,
                   m_.n_ctx_seq, m_.kv_unified ? "true" : "false"));
  log_.Verbose("spec common_specu: no implementations specified for speculative decoding");
  for (uint32_t i = 0; i < m_.n_seq; i++) {
    log_.Verbose(Format("slot   load_model: id %2u | task -1 | new slot, n_ctx = %u", i, m_.n_ctx_seq));
  }
  log_.Verbose("srv    load_model: prompt cache is enabled, size limit: 8192 MiB");
  log_.Verbose("srv    load_model: use `--cache-ram 0` to disable the prompt cache");
  log_.Verbose("srv    load_model: for more info see https://github.com/ggml-org/llama.cpp/pull/16391");
  log_.Verbose("srv    load_model: context checkpoints enabled, max = 32, min spacing = 8192");
  log_.Verbose("srv          init: idle slots will be saved to prompt cache and cleared upon starting a new task");
  log_.Verbose(
      "srv          init: init: chat template, example_format: '<|im_start|>system\n"
      "You are a helpful assistant<|im_end|>\n"
      "<|im_start|>user\n"
      "Hello<|im_end|>\n"
      "<|im_start|>assistant\n"
      "Hi there<|im_end|>\n"
      "<|im_start|>user\n"
      "How are you?<|im_end|>\n"
      "<|im_start|>assistant\n"
      "'");
  log_.Verbose("srv          init: init: chat template, thinking = 0");
  log_.Info("srv  llama_server: model loaded");
  log_.Info("srv  llama_server: listening on " + listening_url);
  log_.Verbose("srv  update_slots: all slots are idle");
}

void StartupLog::ModelFileFailed(const std::string& reason) {
  const char* path = o_.model_path.c_str();
  // The fit step opens the model first, then the real load tries again: the lines come twice.
  for (int attempt = 0; attempt < 2; attempt++) {
    log_.Error(Format("gguf_init_from_file: failed to open GGUF file '%s' (%s)", path, reason.c_str()));
    log_.Error(Format("llama_model_load: error loading model: llama_model_loader: failed to load model from %s", path));
    log_.Error("llama_model_load_from_file_impl: failed to load model");
    if (attempt == 0) {
      log_.Error("common_fit_params: encountered an error while trying to fit params to free device memory: "
                 "failed to load model");
    }
  }
  ExitAfterLoadError();
}

void StartupLog::AllocationFailed() {
  const std::string buffer = m_.offloaded() ? m_.gpu.name : std::string("CPU");
  const int64_t bytes = m_.offloaded() ? m_.model_dev : m_.model_host;
  if (m_.offloaded() && m_.gpu.name.rfind("CUDA", 0) == 0) {
    log_.Error(Format("ggml_backend_cuda_buffer_type_alloc_buffer: allocating %.2f MiB on device 0: cudaMalloc "
                      "failed: out of memory",
                      static_cast<double>(bytes) / kMiB));
  }
  log_.Error(Format("alloc_tensor_range: failed to allocate %s buffer of size %lld", buffer.c_str(),
                    static_cast<long long>(bytes)));
  log_.Error(Format("llama_model_load: error loading model: unable to allocate %s buffer", buffer.c_str()));
  log_.Error("llama_model_load_from_file_impl: failed to load model");
  ExitAfterLoadError();
}

void StartupLog::ExitAfterLoadError() {
  log_.Error(Format("cmn  common_init_: failed to load model '%s'", o_.model_path.c_str()));
  log_.Error(Format("srv    load_model: failed to load model, '%s'", o_.model_path.c_str()));
  log_.Info("srv    operator(): operator(): cleaning up before exit...");
  log_.Error("srv  llama_server: exiting due to model loading error");
}

void StartupLog::Shutdown() {
  log_.Info("srv    operator(): operator(): cleaning up before exit...");
  for (const std::string& line : BreakdownTable(m_, /*after_load=*/true)) log_.Verbose(line);
}

}  // namespace benchfleet::sim
