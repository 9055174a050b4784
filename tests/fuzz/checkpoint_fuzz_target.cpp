#include "checkpoint_fuzz_target.h"

#include <string_view>

#include <nlohmann/json.hpp>

#include "core/base/error.h"
#include "core/base/json_guard.h"
#include "core/check/bench_result.h"
#include "core/check/startup_log.h"
#include "core/checkpoint/inspector.h"
#include "core/checkpoint/model_config_json.h"
#include "core/checkpoint/name_pattern.h"
#include "core/checkpoint/quant_config.h"
#include "core/checkpoint/safetensors.h"
#include "core/serve/capacity.h"
#include "core/serve/gpu_prices.h"

namespace quantplan::fuzz {
namespace {

template <typename F>
void expect_only_error(F&& f) {
    try {
        f();
    } catch (const Error&) {
        // The one error a hostile input may give.
    }
}

std::string tiny_config(const std::string& quantization_config) {
    return R"({"model_type": "llama", "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 2,
              "num_key_value_heads": 1, "head_dim": 32, "vocab_size": 128, "torch_dtype": "bfloat16", "quantization_config": )" +
           quantization_config + "}";
}

}  // namespace

void run_one_input(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    // As a safetensors file whose length is the input's, and as one claiming to be longer (the
    // payload is never read, so the reader must decide from the header and the size alone).
    // As an engine's startup log and as a benchmark result (quantplan --check).
    expect_only_error([&] { check::read_startup_log(text, "fuzz.log"); });
    expect_only_error([&] { check::read_bench_result(text, "fuzz.json"); });
    // As --serve's trace, length file and option values.
    expect_only_error([&] { serve::parse_trace(std::string(text), "fuzz.csv", "--trace"); });
    expect_only_error([&] { serve::parse_gpu_prices(std::string(text), "gpu-prices.json"); });
    expect_only_error([&] { serve::parse_lengths(std::string(text), "fuzz.txt", "--isl"); });
    expect_only_error([&] { serve::parse_length_spec(std::string(text.substr(0, 256)), "--isl"); });
    expect_only_error([&] { serve::parse_slo(std::string(text.substr(0, 64)), "--slo-ttft"); });
    expect_only_error([&] { serve::parse_arrival(std::string(text.substr(0, 64)), "--arrival"); });
    expect_only_error([&] { parse_safetensors_header(text, size, "fuzz.safetensors"); });
    expect_only_error([&] { parse_safetensors_header(text, size + 4096, "fuzz.safetensors"); });
    // As configuration files.
    QuantConfigTexts texts;
    texts.config_json = std::string(text);
    expect_only_error([&] { parse_quantization_config(texts); });
    // parse_model_config is reached, as in the inspector, behind the untrusted-JSON guard (it
    // catches only parse errors itself: a number like 1e400 would escape as out_of_range).
    expect_only_error([&] {
        parse_untrusted_json(text, "config.json");
        parse_model_config(text, "config.json");
    });
    QuantConfigTexts wrapped;
    wrapped.config_json = tiny_config(std::string(text));
    expect_only_error([&] {
        const QuantizationConfig c = parse_quantization_config(wrapped);
        for (const char* m : {"model.layers.0.self_attn.q_proj", "model.layers.1.mlp.down_proj", "lm_head", "model.layers.0.mlp.gate"})
            for (TensorRole r : {TensorRole::AttentionLinear, TensorRole::MlpLinear, TensorRole::LmHead, TensorRole::Router}) module_rule(c, m, r);
    });
    QuantConfigTexts modelopt;
    modelopt.hf_quant_config = std::string(text);
    expect_only_error([&] { parse_quantization_config(modelopt); });
    // As a name pattern, matched against a module name and against the input itself.
    expect_only_error([&] {
        const NamePattern p = NamePattern::compile(text.substr(0, 256), "fuzz");
        p.match_prefix("model.layers.0.self_attn.q_proj");
        p.match_full(text.substr(0, 512));
    });
    glob_match(text.substr(0, 128), "model.layers.0.self_attn.q_proj");
    // As a whole checkpoint: the input is the config, the index and the only file.
    CheckpointInput in;
    in.path = "fuzz";
    in.config_json = wrapped.config_json;
    in.index_json = std::string(text);
    CheckpointFile f;
    f.name = "model.safetensors";
    f.file_bytes = size;
    try {
        f.header = parse_safetensors_header(text, size, f.name);
    } catch (const Error& e) {
        f.error = e.what();
    }
    in.files.push_back(std::move(f));
    const InspectReport r = inspect_checkpoint(in);  // never throws for bad input
    (void)r;
    // The input as the checkpoint's own config.json (the modern architectures' parsers and inventories).
    CheckpointInput own;
    own.path = "fuzz";
    own.config_json = std::string(text);
    const InspectReport o = inspect_checkpoint(own);
    (void)o;
}

std::vector<std::string> seed_corpus() {
    using D = SafetensorsDtype;
    std::vector<std::string> seeds;
    seeds.push_back(encode_safetensors({{"model.layers.0.self_attn.q_proj.qweight", D::I32, {64, 8}, {}},
                                        {"model.layers.0.self_attn.q_proj.qzeros", D::I32, {1, 8}, {}},
                                        {"model.layers.0.self_attn.q_proj.scales", D::F16, {1, 64}, {}},
                                        {"model.embed_tokens.weight", D::BF16, {128, 64}, {}}},
                                       {{"format", "pt"}}));
    seeds.push_back(encode_safetensors({{"model.layers.0.mlp.down_proj.weight_packed", D::I32, {64, 16}, {}},
                                        {"model.layers.0.mlp.down_proj.weight_scale", D::BF16, {64, 1}, {}},
                                        {"model.layers.0.mlp.down_proj.weight_shape", D::I64, {2}, {}},
                                        {"model.layers.0.self_attn.k_scale", D::BF16, {1}, {}},
                                        {"scalar", D::F32, {}, {}},
                                        {"empty", D::F16, {0, 3}, {}},
                                        {"fp4", D::F4, {8}, {}}}));
    seeds.push_back(encode_safetensors({{"w", D::F8E4M3, {4, 4}, {}}, {"w_scale_inv", D::F32, {1, 1}, {}}}));
    for (const char* q : {
             R"({"quant_method": "awq", "zero_point": true, "group_size": 128, "bits": 4, "version": "gemm", "modules_to_not_convert": ["gate"]})",
             R"({"quant_method": "gptq", "bits": 4, "group_size": 128, "desc_act": true, "sym": true, "dynamic": {"-:.*down_proj": {}, "+:.*layers\\.1\\..*": {"bits": 8}}})",
             R"({"quant_method": "compressed-tensors", "format": "pack-quantized", "ignore": ["lm_head", "re:.*mlp\\.gate$"], "config_groups": {"group_0": {"targets": ["Linear"], "weights": {"num_bits": 4, "type": "int", "strategy": "group", "group_size": 32, "actorder": "group"}, "input_activations": null}}, "kv_cache_scheme": {"num_bits": 8, "type": "float", "strategy": "tensor"}})",
             R"({"quant_method": "fp8", "activation_scheme": "dynamic", "fmt": "e4m3", "weight_block_size": [128, 128]})",
             R"({"quant_method": "modelopt", "quant_algo": "NVFP4", "group_size": 16, "exclude_modules": ["lm_head", "*mlp.gate*"]})",
             R"({"quant_method": "bitsandbytes", "load_in_4bit": true, "bnb_4bit_quant_type": "nf4", "bnb_4bit_use_double_quant": true, "llm_int8_skip_modules": ["lm_head"]})",
             R"({"quant_method": "mxfp4", "modules_to_not_convert": ["model.layers.*.self_attn", "lm_head"]})",
         })
        seeds.push_back(q);
    seeds.push_back(R"({"prices": [{"gpu": "h200", "usd_per_gpu_hour": 3.99, "default": true, "provider": "RunPod", "offering": "1x",
                       "source": "catalog", "date": null}, {"gpu": "l4", "usd_per_gpu_hour": 0.44, "default": false, "provider": "p",
                       "offering": "o", "source": "s", "date": "2026-05-07"}]})");
    seeds.push_back(R"({"backend": "vllm", "num_prompts": 2, "request_rate": "inf", "completed": 2, "mean_ttft_ms": 50.0,
                       "output_throughput": 100.0, "input_lens": [13, 25], "output_lens": [120, 0]})");
    // The modern architectures' config.json files, small.
    seeds.push_back(R"({"model_type": "mistral", "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 4,
                       "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 100, "sliding_window": 16,
                       "max_position_embeddings": 128, "use_sliding_window": true})");
    seeds.push_back(R"({"model_type": "gemma3", "text_config": {"model_type": "gemma3_text", "hidden_size": 64, "intermediate_size": 128,
                       "num_hidden_layers": 7, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16, "vocab_size": 256,
                       "sliding_window": 32}, "vision_config": {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
                       "image_size": 28, "patch_size": 14, "vision_use_head": false}})");
    seeds.push_back(R"({"model_type": "nemotron_h", "hidden_size": 64, "num_hidden_layers": 4, "num_attention_heads": 4,
                       "num_key_value_heads": 2, "vocab_size": 100, "intermediate_size": 128, "mamba_num_heads": 4, "mamba_head_dim": 16,
                       "ssm_state_size": 8, "n_groups": 2, "conv_kernel": 4, "hybrid_override_pattern": "M*-M",
                       "time_step_limit": [0.0, Infinity]})");
    seeds.push_back(R"({"model_type": "llama4", "text_config": {"model_type": "llama4_text", "hidden_size": 64, "intermediate_size": 32,
                       "intermediate_size_mlp": 96, "num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 2,
                       "head_dim": 16, "vocab_size": 128, "num_local_experts": 4, "interleave_moe_layer_step": 2,
                       "no_rope_layers": [1, 1, 1, 0], "attention_chunk_size": 8},
                       "vision_config": {"hidden_size": 16, "image_size": 28, "intermediate_size": 32, "num_attention_heads": 2,
                       "num_hidden_layers": 2, "patch_size": 14, "projector_input_dim": 16, "projector_output_dim": 16,
                       "vision_output_dim": 16}})");
    seeds.push_back(R"({"model_type": "qwen3_next", "hidden_size": 64, "num_hidden_layers": 4, "num_attention_heads": 4,
                       "num_key_value_heads": 2, "head_dim": 16, "vocab_size": 100, "intermediate_size": 64, "num_experts": 4,
                       "num_experts_per_tok": 2, "moe_intermediate_size": 32, "shared_expert_intermediate_size": 32,
                       "linear_num_key_heads": 2, "linear_num_value_heads": 4, "linear_key_head_dim": 8, "linear_value_head_dim": 8,
                       "full_attention_interval": 4})");
    seeds.push_back(R"({"model_type": "qwen3_5", "tie_word_embeddings": false, "text_config": {"model_type": "qwen3_5_text", "hidden_size": 64,
                       "num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16, "vocab_size": 100,
                       "intermediate_size": 64, "linear_num_key_heads": 2, "linear_num_value_heads": 4, "linear_key_head_dim": 8,
                       "linear_value_head_dim": 8, "full_attention_interval": 4, "mamba_ssm_dtype": "float32", "mtp_num_hidden_layers": 1},
                       "vision_config": {"depth": 2, "hidden_size": 16, "intermediate_size": 32, "in_channels": 3, "patch_size": 4,
                       "temporal_patch_size": 2, "spatial_merge_size": 2, "out_hidden_size": 64, "num_position_embeddings": 16,
                       "deepstack_visual_indexes": [1]}})");
    seeds.push_back(R"({"metadata": {"total_size": 1234}, "weight_map": {"model.embed_tokens.weight": "model-00001-of-00002.safetensors"}})");
    seeds.push_back(R"(model\.layers\.\d+\.self_attn\.(q|k|v)_proj$)");
    // Startup-log lines and a benchmark result, as vLLM and SGLang print them (tests/data/logs/).
    seeds.push_back("(EngineCore_0 pid=2881) INFO 09-04 01:29:00 [core.py:74] Initializing a V1 LLM engine (v0.10.1.1) with config: "
                    "model='Qwen2-7B-Instruct', dtype=torch.bfloat16, max_seq_len=16384, tensor_parallel_size=1, quantization=None, "
                    "enforce_eager=False, kv_cache_dtype=auto\n"
                    "(APIServer pid=2739) INFO 09-04 01:28:28 [utils.py:326] non-default args: {'model': 'Qwe\n"
                    "n2-7B-Instruct', 'max_model_len': 16384, 'gpu_memory_utilization': 0.5}\n"
                    "INFO 09-04 01:29:25 [gpu_worker.py:276] Available KV cache memory: 24.83 GiB\n"
                    "INFO 09-04 01:29:26 [kv_cache_utils.py:849] GPU KV cache size: 464,848 tokens\n"
                    "INFO 09-04 01:29:26 [kv_cache_utils.py:853] Maximum concurrency for 16,384 tokens per request: 28.37x\n");
    seeds.push_back("Memory profiling results: total_gpu_memory=23.58GiB initial_memory_usage=15.34GiB peak_torch_memory=17.06GiB "
                    "memory_usage_post_profile=15.35GiB non_torch_memory=0.35GiB kv_cache_size=3.81GiB gpu_memory_utilization=0.90\n"
                    "# GPU blocks: 1478, # CPU blocks: 2048\n"
                    "[2025-03-08 12:29:21 TP0] KV Cache is allocated. #tokens: 46611, K size: 1.42 GB, V size: 1.42 GB\n");
    seeds.push_back(R"({"backend": "vllm", "model_id": "meta-llama/Llama-3.1-8B-Instruct", "num_prompts": 100, "max_concurrency": 4,
                       "completed": 100, "total_input_tokens": 102400, "total_output_tokens": 12800, "mean_ttft_ms": 30.0,
                       "median_tpot_ms": 7.0, "p99_itl_ms": 9.0, "output_throughput": 130.0})");
    return seeds;
}

}  // namespace quantplan::fuzz
