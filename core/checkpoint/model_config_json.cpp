#include "core/checkpoint/model_config_json.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/base/error.h"
#include "core/base/json_guard.h"
#include "core/checkpoint/quant_config.h"

namespace quantplan {
namespace {

using nlohmann::json;

std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

// Reads a whole text file of at most `max_bytes`.
// A short rendering of a JSON value for an error message (values can be huge or deeply nested).
std::string excerpt(const json& v) {
    if (v.is_structured()) return v.is_array() ? "an array" : "an object";
    std::string text = v.dump();
    if (text.size() > 40) text = text.substr(0, 37) + "...";
    return text;
}

std::string read_text(const std::filesystem::path& path, std::uintmax_t max_bytes, const std::string& what) {
    std::error_code ec;
    const auto size = std::filesystem::file_size(path, ec);
    if (ec) throw Error(path.string(), "cannot read " + what + ": " + ec.message());
    if (size > max_bytes) throw Error(path.string(), what + " is " + std::to_string(size) + " bytes, more than the " + std::to_string(max_bytes) + " allowed");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error(path.string(), "cannot open " + what);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// An integer field: absent -> fallback; present but not a non-negative integer -> Error.
std::int64_t int_field(const json& j, const char* key, std::int64_t fallback, const std::string& source, bool required) {
    const auto it = j.find(key);
    if (it == j.end() || it->is_null()) {
        if (required) throw Error(source + ": " + key, "missing");
        return fallback;
    }
    if (it->is_number_integer() || it->is_number_unsigned()) {
        if (it->is_number_unsigned() && it->get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX))
            throw Error(source + ": " + key, "too large");
        return it->get<std::int64_t>();
    }
    if (it->is_number_float()) {
        const double d = it->get<double>();
        if (d == static_cast<double>(static_cast<std::int64_t>(d)) && d >= 0 && d < 9.0e15) return static_cast<std::int64_t>(d);
    }
    throw Error(source + ": " + key, "must be an integer, got " + excerpt(*it));
}

bool bool_field(const json& j, const char* key, bool fallback, const std::string& source) {
    const auto it = j.find(key);
    if (it == j.end() || it->is_null()) return fallback;
    if (!it->is_boolean()) throw Error(source + ": " + key, "must be true or false, got " + excerpt(*it));
    return it->get<bool>();
}

// The architectures quantplan prices: dense GQA stacks and simple MoE.
const std::set<std::string>& modelled_types() {
    static const std::set<std::string> types = {"llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "deepseek_v3", "kimi_k2", "gpt_oss", "gemma3_text", "nemotron_h", "llama4_text", "qwen3_next", "qwen3_5_text", "qwen3_5_moe_text"};
    return types;
}

// DeepSeek-V3's architecture (DeepseekV3ForCausalLM): MLA, routed and shared experts after
// first_k_dense_replace dense layers, MTP modules. Kimi-K2 ships the same architecture.
bool deepseek_v3_type(const std::string& model_type) { return model_type == "deepseek_v3" || model_type == "kimi_k2"; }

// Qwen3.5's text models: dense (qwen3_5_text) and MoE (qwen3_5_moe_text).
bool qwen3_5_type(const std::string& model_type) { return model_type == "qwen3_5_text" || model_type == "qwen3_5_moe_text"; }

// The architectures whose sliding-window layers are priced (layer_types' sliding_attention).
bool sliding_types_priced(const std::string& model_type) { return model_type == "gpt_oss" || model_type == "gemma3_text"; }

// The model types whose config.json gives one sliding_window for every layer (Mistral-7B-v0.1 and
// its fine-tunes: transformers' MistralConfig and MixtralConfig, no layer_types).
bool model_wide_window_type(const std::string& model_type) { return model_type == "mistral" || model_type == "mixtral"; }

// The fields of architectures quantplan prices only for the model types whose parser reads them
// (elsewhere they mark an architecture it would misprice).
const std::map<std::string, std::set<std::string>>& priced_fields() {
    static const std::set<std::string> deepseek = {"kv_lora_rank", "q_lora_rank", "n_routed_experts", "n_shared_experts", "first_k_dense_replace"};
    static const std::map<std::string, std::set<std::string>> m = {
        {"deepseek_v3", deepseek},
        {"kimi_k2", deepseek},
        {"gemma3_text", {"sliding_window_pattern"}},
        {"llama4_text", {"attention_chunk_size", "interleave_moe_layer_step"}},
        {"qwen3_next", {"linear_num_value_heads", "linear_num_key_heads", "full_attention_interval"}},
        {"qwen3_5_text", {"linear_num_value_heads", "linear_num_key_heads", "full_attention_interval"}},
        {"qwen3_5_moe_text", {"linear_num_value_heads", "linear_num_key_heads", "full_attention_interval"}},
        {"nemotron_h", {"hybrid_override_pattern", "ssm_state_size"}},
    };
    return m;
}

// The layer_types values a model type's parser prices: full attention everywhere (newer
// transformers write layer_types for plain models too), sliding windows for gpt-oss and Gemma 3,
// gated DeltaNet layers for Qwen3-Next.
bool layer_type_priced(const std::string& model_type, const std::string& type) {
    if (type == "full_attention") return true;
    if (type == "sliding_attention") return sliding_types_priced(model_type);
    if (type == "linear_attention") return model_type == "qwen3_next" || qwen3_5_type(model_type);
    return false;
}

// Refuses, in one line naming the fields, a config whose architecture quantplan does not model
// (MLA, DeepSeek-style routed and shared experts, per-layer attention types, sliding windows,
// chunked attention, linear attention and state-space layers) instead of pricing it as a simpler
// one (DeepSeek-V3 would come out as a 38.6B dense-MoE model).
void refuse_unmodelled(const json& j, const std::string& model_type, const std::string& source) {
    static const char* kKeys[] = {"kv_lora_rank", "q_lora_rank", "n_routed_experts", "n_shared_experts", "first_k_dense_replace",
                                  "layer_types", "linear_num_value_heads", "linear_num_key_heads", "full_attention_interval",
                                  "ssm_state_size", "mamba_d_state", "mamba_n_heads", "hybrid_override_pattern", "attention_chunk_size",
                                  "interleave_moe_layer_step", "sliding_window_pattern"};
    const auto priced = priced_fields().find(model_type);
    std::vector<std::string> fields;
    for (const char* k : kKeys) {
        const auto it = j.find(k);
        if (it == j.end() || it->is_null()) continue;
        if (priced != priced_fields().end() && priced->second.count(k) != 0) continue;
        if (std::string(k) == "layer_types" && it->is_array() &&
            std::all_of(it->begin(), it->end(), [&](const json& t) { return t.is_string() && layer_type_priced(model_type, t.get<std::string>()); }))
            continue;
        fields.push_back(k);
    }
    // A sliding window that applies (use_sliding_window: true, Qwen2's with its max_window_layers);
    // Qwen's configs carry sliding_window with use_sliding_window false. Mistral's and Mixtral's
    // model-wide window is priced (model_wide_sliding_window).
    if (const auto sw = j.find("sliding_window"); !sliding_types_priced(model_type) && !model_wide_window_type(model_type) && sw != j.end() &&
                                                  sw->is_number()) {
        const auto use = j.find("use_sliding_window");
        if (use != j.end() && use->is_boolean() && use->get<bool>()) fields.push_back("sliding_window");
    }
    const bool unknown_type = !model_type.empty() && modelled_types().count(model_type) == 0;
    if (!unknown_type && fields.empty()) return;
    std::string what = unknown_type ? "model_type '" + model_type + "'" : "model_type '" + model_type + "' with";
    for (std::size_t i = 0; i < fields.size(); ++i) what += (i == 0 ? (unknown_type ? " with " : " ") : ", ") + fields[i];
    throw Error(source, what + " is not modelled: quantplan prices dense GQA and simple MoE models (llama, mistral, mixtral, qwen2, "
                        "qwen2_moe, qwen3, qwen3_moe), DeepSeek-V3's MLA architecture (deepseek_v3, kimi_k2), gpt-oss, Gemma 3, "
                        "Llama 4, Qwen3-Next, Qwen3.5 and Nemotron-H (gpt_oss, gemma3, llama4, qwen3_next, qwen3_5, qwen3_5_moe, nemotron_h), and refuses to price this as a simpler architecture");
}

// gpt-oss (transformers modeling_gpt_oss.py; vLLM gpt_oss.py): every layer MoE with biased experts
// of width intermediate_size and a biased router, q/k/v/o biases, a sink per head, and
// layer_types alternating sliding_attention (a sliding_window-token window) and full_attention.
void parse_gpt_oss(const json& j, ModelConfig& c, const std::string& source) {
    c.num_experts = int_field(j, "num_local_experts", 0, source, true);
    c.experts_per_token = int_field(j, "num_experts_per_tok", int_field(j, "experts_per_token", 0, source, false), source, false);
    c.moe_intermediate_size = int_field(j, "intermediate_size", 0, source, true);
    c.gpt_oss_experts = true;
    c.attention_bias = bool_field(j, "attention_bias", true, source);
    c.o_proj_bias = c.attention_bias;
    c.attention_sinks = true;
    c.qk_norm = false;
    const auto types = j.find("layer_types");
    if (types != j.end() && types->is_array()) {
        for (const json& t : *types) c.sliding_layers.push_back(t.is_string() && t.get<std::string>() == "sliding_attention");
    } else {
        // Older configs without layer_types: even layers slide (vLLM gpt_oss.py: layer_idx % 2 == 0).
        for (std::int64_t l = 0; l < c.num_layers && l < 4096; ++l) c.sliding_layers.push_back(l % 2 == 0);
    }
    c.sliding_window = int_field(j, "sliding_window", 0, source, c.sliding_layer_count() > 0);
}

// Mistral's and Mixtral's sliding_window (null: none): every layer attends to the last
// sliding_window tokens. vLLM applies it to every layer (V0 0.4.2 llama.py and 0.6.3
// attention/layer.py through cache_config.sliding_window; V1 Attention.__init__'s model-level
// fallback, a SlidingWindowSpec per layer) unless use_sliding_window is false; SGLang's llama.py
// ignores it (engine profiles: model_wide_sliding_window).
void parse_model_wide_window(const json& j, ModelConfig& c, const std::string& source) {
    const auto sw = j.find("sliding_window");
    if (sw == j.end() || sw->is_null()) return;
    if (!bool_field(j, "use_sliding_window", true, source)) return;
    if (!sw->is_number_integer() || sw->get<std::int64_t>() < 0) throw Error(source + ": sliding_window", "must be a non-negative integer or null");
    const std::int64_t window = sw->get<std::int64_t>();
    if (window == 0) return;  // vLLM takes 0 as no window
    // With layer_types beside it, vLLM versions disagree on which layers slide (0.11.0 applies the
    // window unless the types interleave; 0.33.0 only when every type is sliding).
    if (const auto types = j.find("layer_types"); types != j.end() && !types->is_null())
        throw Error(source + ": layer_types", "beside a model-wide sliding_window is not modelled (vLLM versions disagree on it)");
    c.sliding_window = window;
    c.sliding_layers.assign(static_cast<std::size_t>(std::clamp<std::int64_t>(c.num_layers, 0, 4096)), true);
    c.sliding_window_model_wide = true;
}

// DeepSeek-V3's fields (configuration_deepseek.py DeepseekV3Config; modeling_deepseek.py decides
// which layers are MoE: layer_idx >= first_k_dense_replace and layer_idx % moe_layer_freq == 0).
void parse_deepseek_v3(const json& j, ModelConfig& c, const std::string& source) {
    c.attention = AttentionKind::Mla;
    c.q_lora_rank = int_field(j, "q_lora_rank", 0, source, false);  // null: q_proj without the bottleneck (V2-Lite)
    c.kv_lora_rank = int_field(j, "kv_lora_rank", 0, source, true);
    c.qk_nope_head_dim = int_field(j, "qk_nope_head_dim", 0, source, true);
    c.qk_rope_head_dim = int_field(j, "qk_rope_head_dim", 0, source, true);
    c.v_head_dim = int_field(j, "v_head_dim", 0, source, true);
    // A query head is qk_nope + qk_rope wide whatever head_dim says (newer copies of the file
    // write head_dim = qk_rope_head_dim).
    c.head_dim = c.qk_nope_head_dim + c.qk_rope_head_dim;
    c.num_kv_heads = c.num_attention_heads;  // the up-projected K and V have every head; the cache has none
    c.attention_bias = bool_field(j, "attention_bias", false, source);
    if (c.attention_bias) throw Error(source + ": attention_bias", "MLA with attention biases is not modelled");
    c.qk_norm = false;
    c.mtp_layers = int_field(j, "num_nextn_predict_layers", 0, source, false);
    c.num_experts = int_field(j, "n_routed_experts", 0, source, false);
    if (c.num_experts > 0) {
        c.deepseek_moe = true;
        c.experts_per_token = int_field(j, "num_experts_per_tok", 0, source, true);
        c.moe_intermediate_size = int_field(j, "moe_intermediate_size", 0, source, true);
        const std::int64_t shared = int_field(j, "n_shared_experts", 0, source, false);
        if (shared > 64) throw Error(source + ": n_shared_experts", "more than 64 shared experts");
        c.shared_expert_intermediate_size = shared * c.moe_intermediate_size;
        const auto method = j.find("topk_method");
        c.router_score_bias = method != j.end() && method->is_string() && method->get<std::string>() == "noaux_tc";
        const std::int64_t first_dense = int_field(j, "first_k_dense_replace", 0, source, false);
        const std::int64_t freq = int_field(j, "moe_layer_freq", 1, source, false);
        if (freq < 1) throw Error(source + ": moe_layer_freq", "must be at least 1");
        for (std::int64_t l = 0; l < c.num_layers && l < 4096; ++l)
            if (l < first_dense || l % freq != 0) c.dense_layers.push_back(l);
    }
}

// Every layer but each period-th ((layer + 1) % period != 0), the period from `period_key`
// (default `period`): Gemma 3's global layers, Qwen3-Next's full-attention ones, Llama 4's NoPE ones.
std::vector<bool> all_but_each_nth(const json& j, const char* period_key, std::int64_t period, std::int64_t num_layers, const std::string& source) {
    const std::int64_t n = int_field(j, period_key, period, source, false);
    if (n < 1) throw Error(source + ": " + period_key, "must be at least 1");
    std::vector<bool> out;
    for (std::int64_t l = 0; l < num_layers && l < 4096; ++l) out.push_back((l + 1) % n != 0);
    return out;
}

// The layers layer_types names `type` (transformers 4.53 on write it), else all_but_each_nth.
std::vector<bool> layers_of_type(const json& j, const char* type, const char* period_key, std::int64_t period, std::int64_t num_layers,
                                 const std::string& source) {
    const auto types = j.find("layer_types");
    if (types == j.end() || !types->is_array()) return all_but_each_nth(j, period_key, period, num_layers, source);
    std::vector<bool> out;
    for (const json& t : *types) out.push_back(t.is_string() && t.get<std::string>() == type);
    return out;
}

// Gemma3TextConfig's defaults for the fields quantplan reads (transformers 4.50.0
// src/transformers/models/gemma3/configuration_gemma3.py): Google's config.json files leave most of
// them out (gemma-3-27b-it's text_config gives no vocab_size).
const json& gemma3_text_defaults() {
    static const json d = {{"vocab_size", 262208},      {"hidden_size", 2304},         {"intermediate_size", 9216},
                           {"num_hidden_layers", 26},   {"num_attention_heads", 8},    {"num_key_value_heads", 4},
                           {"head_dim", 256},           {"max_position_embeddings", 131072}, {"tie_word_embeddings", true},
                           {"attention_bias", false},   {"sliding_window", 4096},      {"sliding_window_pattern", 6}};
    return d;
}

// SiglipVisionConfig's defaults (transformers 4.50.0 models/siglip/configuration_siglip.py).
const json& siglip_vision_defaults() {
    static const json d = {{"hidden_size", 768}, {"intermediate_size", 3072}, {"num_hidden_layers", 12},
                           {"num_channels", 3},  {"image_size", 224},         {"patch_size", 16}};
    return d;
}

// `j` over `defaults`: the keys j gives (null ones too) replace the defaults'.
json with_defaults(const json& defaults, const json& j) {
    json out = defaults;
    for (auto it = j.begin(); it != j.end(); ++it) out[it.key()] = it.value();
    return out;
}

// The vision_config keys Gemma 3's SigLIP tower and Llama 4's vision model both give.
void read_vision_tower(const json& v, const std::string& vs, ModelConfig& c) {
    c.vision_hidden_size = int_field(v, "hidden_size", 0, vs, true);
    c.vision_intermediate_size = int_field(v, "intermediate_size", 0, vs, true);
    c.vision_layers = int_field(v, "num_hidden_layers", 0, vs, true);
    c.vision_channels = int_field(v, "num_channels", 0, vs, true);
    c.vision_image_size = int_field(v, "image_size", 0, vs, true);
    c.vision_patch_size = int_field(v, "patch_size", 0, vs, true);
}

// Gemma 3 (transformers modeling_gemma3.py Gemma3DecoderLayer; vLLM gemma3.py): q/k norms, four
// norms per layer, tied embeddings, and sliding-window layers: layer_types where the config gives
// it, else every layer but each sliding_window_pattern-th ((layer + 1) % pattern != 0, as
// transformers 4.50 and vLLM's gemma3.py decide is_sliding). Gemma3ForConditionalGeneration
// (model_type gemma3) stores the text model under language_model.model. beside a SigLIP vision
// tower (vision_config) that vLLM loads with it.
void parse_gemma3(const json& j, const json* root, ModelConfig& c, const std::string& source) {
    c.qk_norm = true;
    c.sandwich_norms = true;
    c.sliding_layers = layers_of_type(j, "sliding_attention", "sliding_window_pattern", 6, c.num_layers, source);
    c.sliding_window = int_field(j, "sliding_window", 0, source, c.sliding_layer_count() > 0);
    if (root == nullptr) return;  // a text-only Gemma3ForCausalLM
    c.text_prefix = "language_model.model.";
    const auto vc = root->find("vision_config");
    if (vc != root->end() && !vc->is_null() && !vc->is_object()) throw Error(source + ": vision_config", "must be an object");
    const json v = with_defaults(siglip_vision_defaults(), vc != root->end() && vc->is_object() ? *vc : json::object());
    const std::string vs = source + ": vision_config";
    read_vision_tower(v, vs, c);
    if (bool_field(v, "vision_use_head", false, vs)) throw Error(vs + ": vision_use_head", "a SigLIP pooling head is not modelled");
}

// Llama4TextConfig's defaults for the fields quantplan reads (transformers 4.51.0
// models/llama4/configuration_llama4.py).
const json& llama4_text_defaults() {
    static const json d = {{"vocab_size", 202048},         {"hidden_size", 5120},         {"intermediate_size", 8192},
                           {"intermediate_size_mlp", 16384}, {"num_hidden_layers", 48},    {"num_attention_heads", 40},
                           {"num_key_value_heads", 8},      {"head_dim", 128},             {"max_position_embeddings", 131072},
                           {"tie_word_embeddings", false},  {"num_experts_per_tok", 1},    {"num_local_experts", 16},
                           {"interleave_moe_layer_step", 1}, {"attention_chunk_size", 8192}, {"attention_bias", false}};
    return d;
}

// transformers 4.51.0 Llama4VisionConfig's defaults, for the keys a vision_config leaves out.
const json& llama4_vision_defaults() {
    static const json d = {{"hidden_size", 768},        {"num_hidden_layers", 34},         {"num_attention_heads", 16},
                           {"num_channels", 3},         {"intermediate_size", 5632},       {"vision_output_dim", 7680},
                           {"image_size", 448},         {"patch_size", 14},                {"projector_input_dim", 4096},
                           {"projector_output_dim", 4096}, {"multi_modal_projector_bias", false}};
    return d;
}

// Llama 4 (transformers 4.51.0 modeling_llama4.py; vLLM 0.11.0 llama4.py): layer l is MoE when
// (l + 1) % interleave_moe_layer_step == 0 (or listed in moe_layers), with num_local_experts
// experts of intermediate_size, top num_experts_per_tok, and a shared expert of the same width;
// other layers a dense MLP of intermediate_size_mlp. no_rope_layers[l] == 1 marks a layer with
// RoPE and chunked local attention over attention_chunk_size tokens, 0 a global layer without RoPE;
// absent or empty, every fourth layer is global (layers 3, 7, ...). The q/k norm is an L2 norm
// without weights. Llama4ForConditionalGeneration (model_type llama4) stores the text model under
// language_model. beside a vision encoder (vision_config: Llama4VisionModel and the
// multi-modal projector), counted when the config describes it.
void parse_llama4(const json& j, const json* root, ModelConfig& c, const std::string& source) {
    const bool multimodal = root != nullptr;
    c.llama4_moe = true;
    c.qk_norm = false;
    c.intermediate_size = int_field(j, "intermediate_size_mlp", 0, source, true);
    c.num_experts = int_field(j, "num_local_experts", 0, source, true);
    c.experts_per_token = int_field(j, "num_experts_per_tok", 1, source, false);
    c.moe_intermediate_size = int_field(j, "intermediate_size", 0, source, true);
    c.shared_expert_intermediate_size = c.moe_intermediate_size;
    const std::int64_t step = int_field(j, "interleave_moe_layer_step", 1, source, false);
    if (step < 1) throw Error(source + ": interleave_moe_layer_step", "must be at least 1");
    std::vector<bool> moe(static_cast<std::size_t>(std::clamp<std::int64_t>(c.num_layers, 0, 4096)), false);
    const auto listed = j.find("moe_layers");
    if (listed != j.end() && listed->is_array()) {
        for (const json& v : *listed) {
            if (!v.is_number_integer() || v.get<std::int64_t>() < 0 || v.get<std::int64_t>() >= c.num_layers)
                throw Error(source + ": moe_layers", "must list layer indices below num_hidden_layers");
            moe[static_cast<std::size_t>(v.get<std::int64_t>())] = true;
        }
    } else {
        for (std::size_t l = 0; l < moe.size(); ++l) moe[l] = (static_cast<std::int64_t>(l) + 1) % step == 0;
    }
    for (std::size_t l = 0; l < moe.size(); ++l)
        if (!moe[l]) c.dense_layers.push_back(static_cast<std::int64_t>(l));
    const auto nope = j.find("no_rope_layers");
    if (nope != j.end() && nope->is_array() && !nope->empty()) {
        for (const json& v : *nope) {
            if (!v.is_number_integer() || (v.get<std::int64_t>() != 0 && v.get<std::int64_t>() != 1))
                throw Error(source + ": no_rope_layers", "must be a list of 0 and 1");
            c.chunked_layers.push_back(v.get<std::int64_t>() == 1);
        }
    } else {
        c.chunked_layers = all_but_each_nth(j, "no_rope_layer_interval", 4, c.num_layers, source);
    }
    c.attention_chunk_size = int_field(j, "attention_chunk_size", 0, source, false);
    if (c.attention_chunk_size == 0) c.chunked_layers.assign(c.chunked_layers.size(), false);  // null: every layer global
    if (!multimodal) return;
    c.text_prefix = "language_model.model.";
    const auto vc = root->find("vision_config");
    if (vc == root->end() || vc->is_null()) {
        // A copy without vision_config (aiconfigurator's) does not say the encoder's shape; the
        // published checkpoints hold one.
        c.not_counted = "the vision encoder of Llama4ForConditionalGeneration (vision_model, multi_modal_projector): the config.json has no vision_config";
        return;
    }
    if (!vc->is_object()) throw Error(source + ": vision_config", "must be an object");
    const json v = with_defaults(llama4_vision_defaults(), *vc);
    const std::string vs = source + ": vision_config";
    c.vision_llama4 = true;
    read_vision_tower(v, vs, c);
    c.vision_out_hidden_size = int_field(v, "vision_output_dim", 0, vs, true);
    c.vision_projector_input_dim = int_field(v, "projector_input_dim", 0, vs, true);
    c.vision_projector_output_dim = int_field(v, "projector_output_dim", 0, vs, true);
    const std::int64_t heads = int_field(v, "num_attention_heads", 0, vs, true);
    if (heads <= 0 || c.vision_hidden_size % heads != 0) throw Error(vs + ": num_attention_heads", "must divide hidden_size");
    if (bool_field(v, "multi_modal_projector_bias", false, vs)) throw Error(vs + ": multi_modal_projector_bias", "a projector bias is not modelled");
}

// Qwen3-Next (transformers modeling_qwen3_next.py; vLLM 0.11.0 qwen3_next.py): layer_types
// names each layer's token mixer, full_attention or linear_attention (a gated DeltaNet); without it
// layer l is full attention when (l + 1) % full_attention_interval == 0 (Qwen3NextConfig). Full
// attention has q/k norms and, with attn_output_gate, a gate per head in q_proj. The MLP is
// Qwen2-MoE's: routed experts, a gated shared expert, dense layers from mlp_only_layers and
// decoder_sparse_step (parse_simple_moe). The checkpoint ships an MTP module under mtp.
// (num_nextn_predict_layers, 1 in vLLM when absent), loaded only for MTP speculative decoding.
void parse_simple_moe(const json& j, ModelConfig& c, const std::string& source);

void parse_qwen3_next(const json& j, ModelConfig& c, const std::string& source) {
    c.qk_norm = true;
    c.attention_bias = bool_field(j, "attention_bias", false, source);
    c.attn_output_gate = bool_field(j, "attn_output_gate", true, source);
    c.linear_attention_layers = layers_of_type(j, "linear_attention", "full_attention_interval", 4, c.num_layers, source);
    c.linear_num_key_heads = int_field(j, "linear_num_key_heads", 0, source, true);
    c.linear_num_value_heads = int_field(j, "linear_num_value_heads", 0, source, true);
    c.linear_key_head_dim = int_field(j, "linear_key_head_dim", 0, source, true);
    c.linear_value_head_dim = int_field(j, "linear_value_head_dim", 0, source, true);
    c.linear_conv_kernel = int_field(j, "linear_conv_kernel_dim", 4, source, false);
    c.qwen3_next_mtp = int_field(j, "num_nextn_predict_layers", 1, source, false) > 0;
    parse_simple_moe(j, c, source);
}

// Qwen3.5 (vLLM 0.20.1 qwen3_5.py, qwen3_5_mtp.py, models/config.py; model types qwen3_5_text and
// qwen3_5_moe_text, inside qwen3_5 / qwen3_5_moe for Qwen3_5(Moe)ForConditionalGeneration):
// Qwen3-Next's layers, with the gated DeltaNet's input projections stored apart, a dense MLP of
// intermediate_size (qwen3_5_text) or Qwen3-Next's MoE (qwen3_5_moe_text), an MTP module of
// mtp_num_hidden_layers (1 when absent, as vLLM reads it) under mtp. that shares the embedding,
// the recurrent state in mamba_ssm_dtype, and, for the multimodal configs, the text model under
// model.language_model. beside a Qwen3-VL vision transformer under model.visual. that vLLM loads
// with it (qwen3_vl.py Qwen3_VisionTransformer).
void parse_qwen3_5(const json& j, const json* root, ModelConfig& c, const std::string& source) {
    parse_qwen3_next(j, c, source);
    c.linear_split_projections = true;
    c.linear_fp32_decay_and_norm = c.model_type == "qwen3_5_moe_text";
    const std::int64_t mtp = int_field(j, "mtp_num_hidden_layers", 1, source, false);
    if (mtp > 1) throw Error(source + ": mtp_num_hidden_layers", "more than one MTP layer is not modelled");
    c.qwen3_next_mtp = mtp == 1;
    if (bool_field(j, "mtp_use_dedicated_embeddings", false, source))
        throw Error(source + ": mtp_use_dedicated_embeddings", "an MTP module with its own embedding is not modelled");
    if (const auto d = j.find("mamba_ssm_dtype"); d != j.end() && !d->is_null()) {
        if (!d->is_string()) throw Error(source + ": mamba_ssm_dtype", "must be a dtype name");
        const std::string t = d->get<std::string>();
        if (t == "float32") c.linear_state_value_bytes = 4;
        else if (t != "bfloat16" && t != "float16" && t != "auto")
            throw Error(source + ": mamba_ssm_dtype", "'" + t + "' is not modelled (float32, bfloat16 or float16)");
    }
    if (!root) return;
    // Qwen3_5ForConditionalGeneration's config.json states tie_word_embeddings beside text_config.
    if (!j.contains("tie_word_embeddings")) c.tie_word_embeddings = bool_field(*root, "tie_word_embeddings", false, source);
    c.text_prefix = "model.language_model.";
    c.lm_head_name = "lm_head.weight";
    const auto vc = root->find("vision_config");
    if (vc == root->end() || vc->is_null()) return;
    if (!vc->is_object()) throw Error(source + ": vision_config", "must be an object");
    const std::string vs = source + ": vision_config";
    c.vision_qwen3_vl = true;
    c.vision_layers = int_field(*vc, "depth", 0, vs, true);
    c.vision_hidden_size = int_field(*vc, "hidden_size", 0, vs, true);
    c.vision_intermediate_size = int_field(*vc, "intermediate_size", 0, vs, true);
    c.vision_channels = int_field(*vc, "in_channels", 0, vs, true);
    c.vision_patch_size = int_field(*vc, "patch_size", 0, vs, true);
    c.vision_temporal_patch_size = int_field(*vc, "temporal_patch_size", 0, vs, true);
    c.vision_spatial_merge_size = int_field(*vc, "spatial_merge_size", 0, vs, true);
    c.vision_out_hidden_size = int_field(*vc, "out_hidden_size", 0, vs, true);
    c.vision_position_embeddings = int_field(*vc, "num_position_embeddings", 0, vs, true);
    if (const auto ds = vc->find("deepstack_visual_indexes"); ds != vc->end() && !ds->is_null()) {
        if (!ds->is_array()) throw Error(vs + ": deepstack_visual_indexes", "must be a list of layer indexes");
        c.vision_deepstack_mergers = static_cast<std::int64_t>(ds->size());
    }
}

// Nemotron-H (NVIDIA's configuration_nemotron_h.py NemotronHConfig, shipped with the checkpoint;
// vLLM nemotron_h.py): hybrid_override_pattern gives each layer's mixer ('M' Mamba2, '*'
// attention, '-' an MLP of intermediate_size with a relu2 activation and no gate), attention of
// attention_head_dim (else hidden / heads, as vLLM's NemotronHAttention takes it).
void parse_nemotron_h(const json& j, ModelConfig& c, const std::string& source) {
    const auto pattern = j.find("hybrid_override_pattern");
    if (pattern == j.end() || !pattern->is_string()) throw Error(source + ": hybrid_override_pattern", "missing: it says which layers are Mamba, attention or MLP");
    const std::string text = pattern->get<std::string>();
    if (text.size() > 4096) throw Error(source + ": hybrid_override_pattern", "longer than 4096 layers");
    std::string other;
    for (char ch : text) {
        if (ch == 'M') c.layer_kinds.push_back(LayerKind::Mamba);
        else if (ch == '*') c.layer_kinds.push_back(LayerKind::Attention);
        else if (ch == '-') c.layer_kinds.push_back(LayerKind::Mlp);
        else if (other.find(ch) == std::string::npos) other += ch;
    }
    if (!other.empty())
        throw Error(source + ": hybrid_override_pattern",
                    "layers of kind '" + other + "' are not modelled (quantplan prices 'M' Mamba2, '*' attention and '-' MLP layers)");
    if (j.contains("intermediate_size") && j["intermediate_size"].is_array()) {
        if (j["intermediate_size"].size() != 1) throw Error(source + ": intermediate_size", "a width per MLP layer is not modelled");
        c.intermediate_size = int_field(json{{"intermediate_size", j["intermediate_size"][0]}}, "intermediate_size", 0, source, true);
    }
    c.head_dim = int_field(j, "attention_head_dim", int_field(j, "head_dim", c.hidden_size / c.num_attention_heads, source, false), source, false);
    c.mamba_num_heads = int_field(j, "mamba_num_heads", 0, source, true);
    c.mamba_head_dim = int_field(j, "mamba_head_dim", 0, source, true);
    c.ssm_state_size = int_field(j, "ssm_state_size", 0, source, true);
    c.mamba_n_groups = int_field(j, "n_groups", 1, source, false);
    c.mamba_conv_kernel = int_field(j, "conv_kernel", 4, source, false);
    c.mamba_proj_bias = bool_field(j, "use_bias", false, source);
    c.mamba_conv_bias = bool_field(j, "use_conv_bias", true, source);
    c.mlp_gated = false;
    c.mlp_bias = bool_field(j, "mlp_bias", false, source);
    c.attention_bias = bool_field(j, "attention_bias", false, source);
    if (c.attention_bias) throw Error(source + ": attention_bias", "Nemotron-H attention with biases is not modelled (vLLM builds it without)");
    c.qk_norm = false;
}

// The quantization config.json declares, for scheme `native` (and, when read from a checkpoint
// folder, the quantization files beside it: hf_quant_config.json, quant_config.json, quantize_config.json).
void read_declared_quantization(std::string_view text, ModelConfig& c, QuantConfigTexts texts = {}) {
    try {
        texts.config_json = std::string(text);
        auto q = std::make_shared<QuantizationConfig>(parse_quantization_config(texts));
        if (q->method == QuantMethod::Unknown) c.declared_quantization_error = q->problem;
        else if (q->method != QuantMethod::None) c.declared_quantization = std::move(q);
    } catch (const Error& e) {
        c.declared_quantization_error = e.what();
    }
}

// Mixtral, Qwen2-MoE and Qwen3-MoE: routed experts (and Qwen2-MoE's gated shared expert), dense
// layers from mlp_only_layers and decoder_sparse_step.
void parse_simple_moe(const json& j, ModelConfig& c, const std::string& source) {
    c.num_experts = int_field(j, "num_local_experts", 0, source, false);
    if (c.num_experts == 0) c.num_experts = int_field(j, "num_experts", 0, source, false);
    if (c.num_experts > 0) {
        c.experts_per_token = int_field(j, "num_experts_per_tok", 0, source, true);
        // Mixtral's experts use intermediate_size; Qwen-MoE gives moe_intermediate_size.
        c.moe_intermediate_size = int_field(j, "moe_intermediate_size", c.intermediate_size, source, false);
        c.shared_expert_intermediate_size = int_field(j, "shared_expert_intermediate_size", 0, source, false);
        c.shared_expert_gate = c.shared_expert_intermediate_size > 0;  // Qwen2-MoE's shared_expert_gate
        if (j.contains("mlp_only_layers") && !j["mlp_only_layers"].is_null()) {
            if (!j["mlp_only_layers"].is_array()) throw Error(source + ": mlp_only_layers", "must be a list of layer indices");
            for (const auto& v : j["mlp_only_layers"]) {
                if (!v.is_number_integer()) throw Error(source + ": mlp_only_layers", "must be a list of layer indices");
                c.dense_layers.push_back(v.get<std::int64_t>());
            }
        }
        const std::int64_t step = int_field(j, "decoder_sparse_step", 1, source, false);
        if (step < 1) throw Error(source + ": decoder_sparse_step", "must be at least 1");
        if (step > 1) {
            // Qwen-MoE: layer l is sparse when (l + 1) % step == 0.
            for (std::int64_t l = 0; l < c.num_layers && l < 4096; ++l)
                if ((l + 1) % step != 0) c.dense_layers.push_back(l);
        }
    }
}

// parse_model_config, with the quantization files a checkpoint folder holds beside config.json.
ModelConfig parse_config(std::string_view text, const std::string& source, QuantConfigTexts siblings) {
    json root;
    try {
        // config.json as Python's json module writes it may hold NaN and Infinity (Nemotron-H does).
        const std::string cleaned = null_python_literals(text);
        root = json::parse(cleaned.begin(), cleaned.end());
    } catch (const json::exception& e) {  // parse_error, and out_of_range for numbers such as 1e400
        throw Error(source, std::string("not valid JSON (") + e.what() + ")");
    }
    if (!root.is_object()) throw Error(source, "config.json must be a JSON object");
    const bool nested = root.contains("text_config") && root["text_config"].is_object();
    const json& text_json = nested ? root["text_config"] : root;
    // Gemma3ForConditionalGeneration: a gemma3 config around a gemma3_text one.
    const bool gemma3_mm = nested && root.contains("model_type") && root["model_type"] == "gemma3";

    ModelConfig c;
    c.name = source;
    const bool llama4_mm = nested && root.contains("model_type") && root["model_type"] == "llama4";
    if (text_json.contains("model_type") && text_json["model_type"].is_string()) c.model_type = text_json["model_type"].get<std::string>();
    else if (gemma3_mm) c.model_type = "gemma3_text";
    else if (llama4_mm) c.model_type = "llama4_text";
    // Gemma 3's and Llama 4's config.json files leave fields to their config classes' defaults.
    const bool gemma3 = c.model_type == "gemma3_text";
    const bool llama4 = c.model_type == "llama4_text";
    const json merged = gemma3 ? with_defaults(gemma3_text_defaults(), text_json) : llama4 ? with_defaults(llama4_text_defaults(), text_json) : json();
    const json& j = gemma3 || llama4 ? merged : text_json;
    c.hidden_size = int_field(j, "hidden_size", 0, source, true);
    c.num_layers = int_field(j, "num_hidden_layers", 0, source, true);
    c.num_attention_heads = int_field(j, "num_attention_heads", 0, source, true);
    c.num_kv_heads = int_field(j, "num_key_value_heads", c.num_attention_heads, source, false);
    c.vocab_size = int_field(j, "vocab_size", 0, source, true);
    if (c.num_attention_heads <= 0) throw Error(source + ": num_attention_heads", "must be a positive integer");
    c.head_dim = int_field(j, "head_dim", c.hidden_size / c.num_attention_heads, source, false);
    // Nemotron-H may give a width per MLP layer as a list (parse_nemotron_h reads it).
    const bool width_list = c.model_type == "nemotron_h" && j.contains("intermediate_size") && j["intermediate_size"].is_array();
    if (!width_list) c.intermediate_size = int_field(j, "intermediate_size", 0, source, false);
    c.tie_word_embeddings = bool_field(j, "tie_word_embeddings", false, source);
    c.max_position_embeddings = int_field(j, "max_position_embeddings", 0, source, false);
    // Qwen2 projections always carry q/k/v biases; other families say so with attention_bias.
    const bool qwen2_family = c.model_type == "qwen2" || c.model_type == "qwen2_moe";
    c.attention_bias = bool_field(j, "attention_bias", qwen2_family, source);
    c.qk_norm = c.model_type == "qwen3" || c.model_type == "qwen3_moe";

    refuse_unmodelled(j, c.model_type, source);

    if (c.model_type == "gpt_oss") parse_gpt_oss(j, c, source);
    else if (gemma3) parse_gemma3(j, gemma3_mm ? &root : nullptr, c, source);
    else if (c.model_type == "nemotron_h") parse_nemotron_h(j, c, source);
    else if (llama4) parse_llama4(j, llama4_mm ? &root : nullptr, c, source);
    else if (c.model_type == "qwen3_next") parse_qwen3_next(j, c, source);
    else if (qwen3_5_type(c.model_type)) parse_qwen3_5(j, nested ? &root : nullptr, c, source);
    else if (deepseek_v3_type(c.model_type)) parse_deepseek_v3(j, c, source);
    else parse_simple_moe(j, c, source);
    if (model_wide_window_type(c.model_type)) parse_model_wide_window(j, c, source);
    validate_model(c);
    read_declared_quantization(text, c, std::move(siblings));
    return c;
}

}  // namespace

ModelConfig parse_model_config(std::string_view text, const std::string& source) { return parse_config(text, source, {}); }

ModelConfig load_model_config(const std::filesystem::path& path) {
    std::filesystem::path file = path;
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) file = path / "config.json";
    if (!std::filesystem::is_regular_file(file, ec)) throw Error(file.string(), "no such config.json");
    constexpr std::uintmax_t kMaxConfigBytes = 16u << 20;
    const std::string text = read_text(file, kMaxConfigBytes, "config.json");
    // A ModelOpt, AutoAWQ or AutoGPTQ export declares its quantization in a file beside config.json.
    QuantConfigTexts siblings;
    const auto sibling = [&](const char* name, std::optional<std::string>& into) {
        const std::filesystem::path f = file.parent_path() / name;
        if (std::filesystem::is_regular_file(f, ec)) into = read_text(f, kMaxConfigBytes, name);
    };
    sibling("hf_quant_config.json", siblings.hf_quant_config);
    sibling("quant_config.json", siblings.quant_config);
    sibling("quantize_config.json", siblings.quantize_config);
    return parse_config(text, file.string(), std::move(siblings));
}

std::vector<BundledModel> load_model_catalog(const std::filesystem::path& models_dir) {
    const std::filesystem::path file = models_dir / "catalog.json";
    json j;
    try {
        j = json::parse(read_text(file, 1u << 20, "model catalog"));
    } catch (const json::exception& e) {
        throw Error(file.string(), std::string("invalid catalog: ") + e.what());
    }
    std::vector<BundledModel> out;
    for (const auto& m : j.at("models")) {
        BundledModel b;
        b.name = m.at("name").get<std::string>();
        b.hf_repo = m.value("hf_repo", "");
        for (const auto& a : m.value("aliases", json::array())) b.aliases.push_back(a.get<std::string>());
        b.priced = m.value("priced", true);
        out.push_back(std::move(b));
    }
    return out;
}

const BundledModel* find_bundled_model(const std::vector<BundledModel>& catalog, std::string_view argument) {
    const std::string key = lower(std::string(argument));
    const std::string tail = key.substr(key.find_last_of('/') == std::string::npos ? 0 : key.find_last_of('/') + 1);
    for (const BundledModel& m : catalog) {
        bool match = key == m.name || key == lower(m.hf_repo) || tail == m.name;
        for (const std::string& a : m.aliases) match = match || key == a || tail == a;
        if (match) return &m;
    }
    return nullptr;
}

ModelConfig resolve_model(std::string_view argument, const std::filesystem::path& models_dir) {
    const std::string arg(argument);
    std::error_code ec;
    const bool looks_like_path = arg.find('/') != std::string::npos || arg.find('\\') != std::string::npos || arg.ends_with(".json");
    if (looks_like_path && std::filesystem::exists(arg, ec)) return load_model_config(arg);

    std::vector<BundledModel> catalog;
    try {
        catalog = load_model_catalog(models_dir);
    } catch (const Error&) {
        if (looks_like_path) throw Error("--model", "'" + arg + "': no such file or folder");
        throw;
    }
    if (const BundledModel* m = find_bundled_model(catalog, arg)) {
        try {
            ModelConfig c = load_model_config(models_dir / m->name / "config.json");
            c.name = m->name;
            return c;
        } catch (const Error& e) {
            if (m->priced) throw;
            throw Error("--model", "'" + m->name + "' is bundled only as evidence for the measurement corpus; " + e.what());
        }
    }
    std::string names;
    for (const BundledModel& m : catalog)
        if (m.priced) names += (names.empty() ? "" : ", ") + m.name;
    if (looks_like_path) throw Error("--model", "'" + arg + "': no such file or folder");
    throw Error("--model", "unknown model '" + arg + "' (bundled: " + names + "; or give a path to a config.json)");
}

}  // namespace quantplan
