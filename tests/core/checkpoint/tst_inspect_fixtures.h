#pragma once
// Checkpoints written by the tests: a tiny Llama-shaped model stored the way each exporter stores
// it (tensor names, dtypes, packed shapes of ../shared/reference/checkpoint-formats.md §1-§8),
// written as real safetensors files into a temporary folder. The shapes are computed here from the
// reference's tables, independently of core/scheme/bytes.cpp, so that the inspector's zero difference on
// these files checks both.
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/checkpoint/model_config_json.h"
#include "core/checkpoint/safetensors.h"
#include "core/model/model.h"

namespace quantplan::test {

// A folder under the system temp dir, removed with everything in it when the object goes.
class TempDir {
public:
    TempDir() {
        static std::atomic<int> counter{0};
        std::random_device rd;
        path_ = std::filesystem::temp_directory_path() /
                ("quantplan_inspect_" + std::to_string(rd()) + "_" + std::to_string(counter++));
        std::filesystem::create_directories(path_);
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::filesystem::path& path() const { return path_; }

private:
    std::filesystem::path path_;
};

// Writes `bytes` to `path`.
inline void write_bytes(const std::filesystem::path& path, const std::string& bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

inline std::int64_t cdiv(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// The tiny model: Llama layout, 2 layers, hidden 256, MLP 512, 4 heads of 64 (2 KV heads), vocab 1024.
inline nlohmann::json tiny_config(const std::string& torch_dtype = "bfloat16") {
    return {{"architectures", {"LlamaForCausalLM"}},
            {"model_type", "llama"},
            {"hidden_size", 256},
            {"intermediate_size", 512},
            {"num_hidden_layers", 2},
            {"num_attention_heads", 4},
            {"num_key_value_heads", 2},
            {"head_dim", 64},
            {"vocab_size", 1024},
            {"max_position_embeddings", 4096},
            {"tie_word_embeddings", false},
            {"torch_dtype", torch_dtype}};
}

// How one N x K linear is written. Returns the stored tensors for module `m` (name without ".weight").
using LinearWriter = std::function<std::vector<SafetensorsEntry>(const std::string& m, std::int64_t n, std::int64_t k)>;

using D = SafetensorsDtype;

// 32-bit words all holding `value` (little-endian), e.g. GPTQ v1 qzeros of 7s.
inline std::string words(std::int64_t count, std::uint32_t value) {
    std::string s;
    s.reserve(static_cast<std::size_t>(count) * 4);
    for (std::int64_t i = 0; i < count; ++i)
        for (int b = 0; b < 4; ++b) s.push_back(static_cast<char>((value >> (8 * b)) & 0xFF));
    return s;
}

// AutoAWQ GEMM, 4-bit, group g: qweight I32 [K, N/8], qzeros I32 [K/G, N/8], scales F16 [K/G, N].
inline LinearWriter awq_gemm(std::int64_t g) {
    return [g](const std::string& m, std::int64_t n, std::int64_t k) {
        return std::vector<SafetensorsEntry>{{m + ".qweight", D::I32, {k, n / 8}, {}},
                                             {m + ".qzeros", D::I32, {k / g, n / 8}, words(k / g * (n / 8), 0x88888888u)},
                                             {m + ".scales", D::F16, {k / g, n}, {}}};
    };
}

// AutoAWQ GEMV, 4-bit, group g: qweight I32 [N, K/8], qzeros I32 [N, Z], scales F16 [N, 8Z].
inline LinearWriter awq_gemv(std::int64_t g) {
    return [g](const std::string& m, std::int64_t n, std::int64_t k) {
        const std::int64_t mult = g >= 128 ? 1 : g == 64 ? 2 : 4;
        const std::int64_t z = mult * cdiv(cdiv(k / g, 8), mult);
        return std::vector<SafetensorsEntry>{{m + ".qweight", D::I32, {n, k / 8}, {}},
                                             {m + ".qzeros", D::I32, {n, z}, {}},
                                             {m + ".scales", D::F16, {n, 8 * z}, {}}};
    };
}

// GPTQ v1, b bits, group g: qweight I32 [K*b/32, N], qzeros I32 [K/G, N*b/32] (7s: zeros minus 1),
// scales F16 [K/G, N], g_idx I32 [K] (i / G without act-order).
inline LinearWriter gptq(int bits, std::int64_t g) {
    return [bits, g](const std::string& m, std::int64_t n, std::int64_t k) {
        std::string gidx;
        for (std::int64_t i = 0; i < k; ++i) gidx += words(1, static_cast<std::uint32_t>(i / g));
        return std::vector<SafetensorsEntry>{{m + ".qweight", D::I32, {k * bits / 32, n}, {}},
                                             {m + ".qzeros", D::I32, {k / g, n * bits / 32}, words(k / g * (n * bits / 32), 0x77777777u)},
                                             {m + ".scales", D::F16, {k / g, n}, {}},
                                             {m + ".g_idx", D::I32, {k}, gidx}};
    };
}

// compressed-tensors pack-quantized W4A16 (symmetric, group g, BF16 scales): weight_packed I32
// [N, K/8], weight_scale BF16 [N, K/G], weight_shape I64 [2]; actorder group adds weight_g_idx I32 [K].
inline LinearWriter ct_pack(std::int64_t g, bool actorder = false) {
    return [g, actorder](const std::string& m, std::int64_t n, std::int64_t k) {
        std::string shape = words(1, static_cast<std::uint32_t>(n)) + words(1, 0) + words(1, static_cast<std::uint32_t>(k)) + words(1, 0);
        std::vector<SafetensorsEntry> t{{m + ".weight_packed", D::I32, {n, k / 8}, {}},
                                        {m + ".weight_scale", D::BF16, {n, k / g}, {}},
                                        {m + ".weight_shape", D::I64, {2}, shape}};
        if (actorder) t.push_back({m + ".weight_g_idx", D::I32, {k}, {}});
        return t;
    };
}

// compressed-tensors int-quantized W8A8 (channel weights, dynamic token activations): weight I8 [N,K],
// weight_scale BF16 [N, 1].
inline LinearWriter ct_int8() {
    return [](const std::string& m, std::int64_t n, std::int64_t k) {
        return std::vector<SafetensorsEntry>{{m + ".weight", D::I8, {n, k}, {}}, {m + ".weight_scale", D::BF16, {n, 1}, {}}};
    };
}

// compressed-tensors float-quantized FP8: channel weights (weight_scale BF16 [N,1]), with static
// per-tensor activations input_scale BF16 [1] when `static_acts`.
inline LinearWriter ct_fp8(bool static_acts) {
    return [static_acts](const std::string& m, std::int64_t n, std::int64_t k) {
        std::vector<SafetensorsEntry> t{{m + ".weight", D::F8E4M3, {n, k}, {}}, {m + ".weight_scale", D::BF16, {n, 1}, {}}};
        if (static_acts) t.push_back({m + ".input_scale", D::BF16, {1}, {}});
        return t;
    };
}

// Hugging Face fp8 with weight_block_size [128, 128]: weight F8_E4M3 [N,K], weight_scale_inv
// [cdiv(N,128), cdiv(K,128)] in `scale_dtype`.
inline LinearWriter hf_fp8_block(D scale_dtype) {
    return [scale_dtype](const std::string& m, std::int64_t n, std::int64_t k) {
        return std::vector<SafetensorsEntry>{{m + ".weight", D::F8E4M3, {n, k}, {}},
                                             {m + ".weight_scale_inv", scale_dtype, {cdiv(n, 128), cdiv(k, 128)}, {}}};
    };
}

// ModelOpt NVFP4: weight U8 [N, K/2], weight_scale F8_E4M3 [N, K/16], weight_scale_2 F32 0-d, input_scale F32 0-d.
inline LinearWriter modelopt_nvfp4() {
    return [](const std::string& m, std::int64_t n, std::int64_t k) {
        return std::vector<SafetensorsEntry>{{m + ".weight", D::U8, {n, k / 2}, {}},
                                             {m + ".weight_scale", D::F8E4M3, {n, k / 16}, {}},
                                             {m + ".weight_scale_2", D::F32, {}, {}},
                                             {m + ".input_scale", D::F32, {}, {}}};
    };
}

// ModelOpt FP8: weight F8_E4M3 [N,K], weight_scale F32 0-d, input_scale F32 0-d.
inline LinearWriter modelopt_fp8() {
    return [](const std::string& m, std::int64_t n, std::int64_t k) {
        return std::vector<SafetensorsEntry>{{m + ".weight", D::F8E4M3, {n, k}, {}}, {m + ".weight_scale", D::F32, {}, {}}, {m + ".input_scale", D::F32, {}, {}}};
    };
}

// bitsandbytes nf4, blocks of 64, double quantization, weights originally bfloat16: weight U8
// [NK/2, 1], weight.absmax U8 [NK/64], weight.nested_absmax F32 [cdiv(NK/64, 256)], weight.quant_map
// F32 [16], weight.nested_quant_map F32 [256], weight.quant_state.bitsandbytes__nf4 U8 [J] holding
// the state's JSON as json.dumps writes it.
inline LinearWriter bnb_nf4_double_quant() {
    return [](const std::string& m, std::int64_t n, std::int64_t k) {
        const std::string state = "{\"quant_type\": \"nf4\", \"blocksize\": 64, \"dtype\": \"bfloat16\", \"shape\": [" + std::to_string(n) + ", " +
                                  std::to_string(k) + "], \"nested_blocksize\": 256, \"nested_dtype\": \"float32\", \"nested_offset\": 0.012467634677886963}";
        const std::int64_t blocks = cdiv(n * k, 64);
        return std::vector<SafetensorsEntry>{{m + ".weight", D::U8, {n * k / 2, 1}, {}},
                                             {m + ".weight.absmax", D::U8, {blocks}, {}},
                                             {m + ".weight.nested_absmax", D::F32, {cdiv(blocks, 256)}, {}},
                                             {m + ".weight.quant_map", D::F32, {16}, {}},
                                             {m + ".weight.nested_quant_map", D::F32, {256}, {}},
                                             {m + ".weight.quant_state.bitsandbytes__nf4", D::U8, {static_cast<std::int64_t>(state.size())}, state}};
    };
}

// bitsandbytes LLM.int8: weight I8 [N,K], SCB F32 [N], weight_format U8 0-d.
inline LinearWriter bnb_int8() {
    return [](const std::string& m, std::int64_t n, std::int64_t k) {
        return std::vector<SafetensorsEntry>{{m + ".weight", D::I8, {n, k}, {}}, {m + ".SCB", D::F32, {n}, {}}, {m + ".weight_format", D::U8, {}, {}}};
    };
}

// Every tensor of `config`, the linears of the decoder blocks written by `writer` unless `keep`
// says otherwise, the rest in `dtype`. `extra` adds tensors (KV scales, ...).
struct FixtureSpec {
    nlohmann::json config = tiny_config();
    LinearWriter writer;                                  // empty: nothing quantized
    std::function<bool(const TensorInfo&)> quantize;      // default: attention and MLP linears
    D dtype = D::BF16;
    std::vector<SafetensorsEntry> extra;
    int shards = 1;                                       // >1: model-0000i-of-0000n + index
};

inline std::vector<SafetensorsEntry> fixture_tensors(const FixtureSpec& spec) {
    const ModelConfig model = parse_model_config(spec.config.dump(), "fixture config.json");
    std::vector<SafetensorsEntry> out;
    for (const TensorInfo& t : tensor_inventory(model)) {
        const bool block_linear = t.role == TensorRole::AttentionLinear || t.role == TensorRole::MlpLinear || t.role == TensorRole::ExpertLinear;
        const bool q = spec.writer && (spec.quantize ? spec.quantize(t) : block_linear);
        if (q) {
            for (SafetensorsEntry& e : spec.writer(t.name.substr(0, t.name.size() - 7), t.shape[0], t.shape[1])) out.push_back(std::move(e));
        } else {
            out.push_back({t.name, spec.dtype, t.shape, {}});
        }
    }
    for (const SafetensorsEntry& e : spec.extra) out.push_back(e);
    return out;
}

// Writes config.json and the safetensors file(s) (with model.safetensors.index.json when sharded).
inline void write_fixture(const std::filesystem::path& dir, const FixtureSpec& spec) {
    write_bytes(dir / "config.json", spec.config.dump(2));
    const std::vector<SafetensorsEntry> tensors = fixture_tensors(spec);
    if (spec.shards <= 1) {
        write_bytes(dir / "model.safetensors", encode_safetensors(tensors, {{"format", "pt"}}));
        return;
    }
    nlohmann::json index;
    std::uint64_t total = 0;
    for (int s = 0; s < spec.shards; ++s) {
        char name[64];
        std::snprintf(name, sizeof name, "model-%05d-of-%05d.safetensors", s + 1, spec.shards);
        std::vector<SafetensorsEntry> part;
        for (std::size_t i = static_cast<std::size_t>(s); i < tensors.size(); i += static_cast<std::size_t>(spec.shards)) {
            part.push_back(tensors[i]);
            index["weight_map"][tensors[i].name] = name;
        }
        const std::string bytes = encode_safetensors(part, {{"format", "pt"}});
        total += parse_safetensors_header(bytes, bytes.size(), name).data_bytes();
        write_bytes(dir / name, bytes);
    }
    index["metadata"]["total_size"] = total;
    write_bytes(dir / "model.safetensors.index.json", index.dump(2));
}

}  // namespace quantplan::test
