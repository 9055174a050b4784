#include "core/model/model.h"

#include <algorithm>
#include <string>

#include "core/base/error.h"

namespace quantplan {

const char* tensor_role_name(TensorRole role) {
    switch (role) {
        case TensorRole::Embedding: return "embedding";
        case TensorRole::LmHead: return "lm_head";
        case TensorRole::AttentionLinear: return "attention";
        case TensorRole::MambaLinear: return "mamba";
        case TensorRole::MlpLinear: return "mlp";
        case TensorRole::ExpertLinear: return "experts";
        case TensorRole::SharedExpertLinear: return "shared_experts";
        case TensorRole::Router: return "router";
        case TensorRole::Norm: return "norm";
        case TensorRole::Projection: return "projection";
        case TensorRole::Bias: return "bias";
        case TensorRole::Vision: return "vision";
    }
    return "unknown";
}

bool ModelConfig::layer_is_moe(std::int64_t layer) const {
    if (!is_moe()) return false;
    return std::find(dense_layers.begin(), dense_layers.end(), layer) == dense_layers.end();
}

std::int64_t ModelConfig::linear_attention_layer_count() const { return static_cast<std::int64_t>(std::count(linear_attention_layers.begin(), linear_attention_layers.end(), true)); }

std::int64_t ModelConfig::attention_layer_count() const {
    if (layer_kinds.empty()) return num_layers - linear_attention_layer_count();
    return static_cast<std::int64_t>(std::count(layer_kinds.begin(), layer_kinds.end(), LayerKind::Attention));
}

std::int64_t ModelConfig::mamba_layer_count() const {
    return static_cast<std::int64_t>(std::count(layer_kinds.begin(), layer_kinds.end(), LayerKind::Mamba));
}

std::int64_t ModelConfig::mlp_layer_count() const {
    if (layer_kinds.empty()) return num_layers;
    return static_cast<std::int64_t>(std::count(layer_kinds.begin(), layer_kinds.end(), LayerKind::Mlp));
}

std::int64_t ModelConfig::chunked_layer_count() const { return static_cast<std::int64_t>(std::count(chunked_layers.begin(), chunked_layers.end(), true)); }

std::int64_t ModelConfig::sliding_layer_count() const { return static_cast<std::int64_t>(std::count(sliding_layers.begin(), sliding_layers.end(), true)); }

std::int64_t TensorInfo::elements() const {
    std::int64_t n = 1;
    for (std::int64_t d : shape) n *= d;
    return n;
}

void validate_model(const ModelConfig& c) {
    // Bounds far above any published model, low enough that every product of two fits in int64
    // and an inventory never grows past a few million entries.
    constexpr std::int64_t kMaxDim = std::int64_t{1} << 24;     // 16.7M elements per dimension
    constexpr std::int64_t kMaxLayers = 4096;
    constexpr std::int64_t kMaxExperts = 4096;
    const auto need = [](std::int64_t v, std::int64_t max, const char* field) {
        if (v <= 0) throw Error(std::string("config.json: ") + field, "must be a positive integer, got " + std::to_string(v));
        if (v > max) throw Error(std::string("config.json: ") + field, std::to_string(v) + " is larger than any supported model (max " + std::to_string(max) + ")");
    };
    // A per-layer list (layer_types, no_rope_layers, hybrid_override_pattern) names every layer once.
    const auto one_per_layer = [&](std::size_t listed, const char* field) {
        if (static_cast<std::int64_t>(listed) != c.num_layers)
            throw Error(std::string("config.json: ") + field, "lists " + std::to_string(listed) + " layers for num_hidden_layers " + std::to_string(c.num_layers));
    };
    need(c.hidden_size, kMaxDim, "hidden_size");
    need(c.num_layers, kMaxLayers, "num_hidden_layers");
    need(c.num_attention_heads, kMaxDim, "num_attention_heads");
    need(c.num_kv_heads, kMaxDim, "num_key_value_heads");
    need(c.head_dim, kMaxDim, "head_dim");
    need(c.vocab_size, kMaxDim, "vocab_size");
    if (c.num_attention_heads % c.num_kv_heads != 0)
        throw Error("config.json: num_key_value_heads", std::to_string(c.num_kv_heads) + " does not divide num_attention_heads " + std::to_string(c.num_attention_heads));
    if (c.q_dim() > kMaxDim) throw Error("config.json: num_attention_heads", "num_attention_heads x head_dim is too large");
    bool any_dense = !c.is_moe() && c.mlp_layer_count() > 0;
    if (c.is_moe()) {
        need(c.num_experts, kMaxExperts, "num_experts");
        need(c.experts_per_token, c.num_experts, "num_experts_per_tok");
        need(c.moe_intermediate_size, kMaxDim, "moe_intermediate_size");
        if (c.num_experts * c.num_layers * 3 > 4'000'000) throw Error("config.json: num_experts", "too many expert tensors");
        for (std::int64_t l : c.dense_layers) {
            if (l < 0 || l >= c.num_layers) throw Error("config.json: mlp_only_layers", "layer " + std::to_string(l) + " out of range");
            any_dense = true;
        }
        if (c.shared_expert_intermediate_size < 0 || c.shared_expert_intermediate_size > kMaxDim)
            throw Error("config.json: shared_expert_intermediate_size", "out of range");
    }
    if (any_dense) need(c.intermediate_size, kMaxDim, "intermediate_size");
    if (c.is_mla()) {
        if (c.q_lora_rank < 0 || c.q_lora_rank > kMaxDim) throw Error("config.json: q_lora_rank", "out of range");
        need(c.kv_lora_rank, kMaxDim, "kv_lora_rank");
        need(c.qk_nope_head_dim, kMaxDim, "qk_nope_head_dim");
        need(c.qk_rope_head_dim, kMaxDim, "qk_rope_head_dim");
        need(c.v_head_dim, kMaxDim, "v_head_dim");
        if (c.head_dim != c.qk_nope_head_dim + c.qk_rope_head_dim)
            throw Error("config.json: qk_nope_head_dim", "an MLA model's head_dim must be qk_nope_head_dim + qk_rope_head_dim");
        if (c.num_attention_heads * std::max(c.head_dim, c.qk_nope_head_dim + c.v_head_dim) > kMaxDim)
            throw Error("config.json: num_attention_heads", "num_attention_heads x head dims is too large");
    }
    if (!c.sliding_layers.empty()) {
        one_per_layer(c.sliding_layers.size(), "layer_types");
        if (c.sliding_layer_count() > 0) need(c.sliding_window, kMaxDim, "sliding_window");
    }
    if (!c.linear_attention_layers.empty()) {
        one_per_layer(c.linear_attention_layers.size(), "layer_types");
        if (c.attention_layer_count() == 0) throw Error("config.json: layer_types", "has no full_attention layer: a stack of linear attention only is not modelled");
        if (c.linear_attention_layer_count() > 0) {
            need(c.linear_num_key_heads, kMaxDim, "linear_num_key_heads");
            need(c.linear_num_value_heads, kMaxDim, "linear_num_value_heads");
            need(c.linear_key_head_dim, kMaxDim, "linear_key_head_dim");
            need(c.linear_value_head_dim, kMaxDim, "linear_value_head_dim");
            need(c.linear_conv_kernel, 64, "linear_conv_kernel_dim");
            if (c.linear_key_dim() > kMaxDim || c.linear_value_dim() > kMaxDim) throw Error("config.json: linear_num_value_heads", "linear attention is too wide");
            if (c.linear_num_value_heads % c.linear_num_key_heads != 0)
                throw Error("config.json: linear_num_key_heads", std::to_string(c.linear_num_key_heads) + " does not divide linear_num_value_heads " + std::to_string(c.linear_num_value_heads));
        }
    }
    if (!c.chunked_layers.empty()) {
        one_per_layer(c.chunked_layers.size(), "no_rope_layers");
        if (c.chunked_layer_count() > 0) need(c.attention_chunk_size, kMaxDim, "attention_chunk_size");
        for (std::int64_t l = 0; l < c.num_layers; ++l)
            if (c.layer_is_chunked(l) && c.layer_is_sliding(l)) throw Error("config.json: no_rope_layers", "a layer both chunked and sliding is not modelled");
    }
    if (c.is_hybrid_stack()) {
        one_per_layer(c.layer_kinds.size(), "hybrid_override_pattern");
        if (c.attention_layer_count() == 0)
            throw Error("config.json: hybrid_override_pattern", "has no attention layer ('*'): a stack without attention is not modelled");
        if (c.is_moe()) throw Error("config.json: hybrid_override_pattern", "a hybrid stack with experts is not modelled");
        if (c.mamba_layer_count() > 0) {
            need(c.mamba_num_heads, kMaxDim, "mamba_num_heads");
            need(c.mamba_head_dim, kMaxDim, "mamba_head_dim");
            need(c.ssm_state_size, kMaxDim, "ssm_state_size");
            need(c.mamba_n_groups, kMaxDim, "n_groups");
            need(c.mamba_conv_kernel, 64, "conv_kernel");
            if (c.mamba_num_heads * c.mamba_head_dim > kMaxDim) throw Error("config.json: mamba_num_heads", "mamba_num_heads x mamba_head_dim is too large");
            if (c.mamba_n_groups * c.ssm_state_size > kMaxDim) throw Error("config.json: n_groups", "n_groups x ssm_state_size is too large");
            if (c.mamba_num_heads % c.mamba_n_groups != 0)
                throw Error("config.json: n_groups", std::to_string(c.mamba_n_groups) + " does not divide mamba_num_heads " + std::to_string(c.mamba_num_heads));
        }
    }
    if (c.has_vision()) {
        need(c.vision_layers, 256, "vision_config.num_hidden_layers");
        need(c.vision_hidden_size, kMaxDim, "vision_config.hidden_size");
        need(c.vision_intermediate_size, kMaxDim, "vision_config.intermediate_size");
        need(c.vision_channels, 16, "vision_config.num_channels");
        need(c.vision_patch_size, 4096, "vision_config.patch_size");
        if (c.vision_llama4) {
            need(c.vision_image_size, 1 << 16, "vision_config.image_size");
            need(c.vision_out_hidden_size, kMaxDim, "vision_config.vision_output_dim");
            need(c.vision_projector_input_dim, kMaxDim, "vision_config.projector_input_dim");
            need(c.vision_projector_output_dim, kMaxDim, "vision_config.projector_output_dim");
            const std::int64_t side = c.vision_image_size / c.vision_patch_size;
            if (side * side > kMaxDim) throw Error("config.json: vision_config.image_size", "too many patches");
        } else if (c.vision_qwen3_vl) {
            need(c.vision_temporal_patch_size, 64, "vision_config.temporal_patch_size");
            need(c.vision_position_embeddings, kMaxDim, "vision_config.num_position_embeddings");
            need(c.vision_spatial_merge_size, 64, "vision_config.spatial_merge_size");
            need(c.vision_out_hidden_size, kMaxDim, "vision_config.out_hidden_size");
            if (c.vision_deepstack_mergers < 0 || c.vision_deepstack_mergers > c.vision_layers)
                throw Error("config.json: vision_config.deepstack_visual_indexes", "more mergers than vision layers");
            if (c.vision_hidden_size * c.vision_spatial_merge_size * c.vision_spatial_merge_size > kMaxDim)
                throw Error("config.json: vision_config.spatial_merge_size", "spatial_merge_size^2 x hidden_size is too large");
        } else {
            need(c.vision_image_size, 1 << 16, "vision_config.image_size");
            if (c.vision_image_size % c.vision_patch_size != 0)
                throw Error("config.json: vision_config.image_size", "is not a multiple of patch_size");
            const std::int64_t side = c.vision_image_size / c.vision_patch_size;
            if (side * side > kMaxDim) throw Error("config.json: vision_config.image_size", "too many patches");
        }
    }
    if (c.mtp_layers < 0 || c.mtp_layers > 16) throw Error("config.json: num_nextn_predict_layers", "must be between 0 and 16");
    if (c.mtp_layers > 0 && c.is_moe() && c.num_experts * (c.num_layers + c.mtp_layers) * 3 > 4'000'000)
        throw Error("config.json: num_experts", "too many expert tensors");
}

namespace {

// The attention tensors of decoder layer `l` (prefix `p`).
void append_attention(std::vector<TensorInfo>& t, const ModelConfig& c, const std::string& p, std::int64_t l) {
    const std::int64_t h = c.hidden_size;
    if (c.is_mla()) {
        // DeepSeek-V3's names and shapes (modeling_deepseek.py DeepseekV3Attention).
        const std::int64_t heads = c.num_attention_heads;
        if (c.q_lora_rank > 0) {
            t.push_back({p + "self_attn.q_a_proj.weight", {c.q_lora_rank, h}, TensorRole::AttentionLinear, l});
            t.push_back({p + "self_attn.q_a_layernorm.weight", {c.q_lora_rank}, TensorRole::Norm, l});
            t.push_back({p + "self_attn.q_b_proj.weight", {heads * c.head_dim, c.q_lora_rank}, TensorRole::AttentionLinear, l});
        } else {
            t.push_back({p + "self_attn.q_proj.weight", {heads * c.head_dim, h}, TensorRole::AttentionLinear, l});
        }
        t.push_back({p + "self_attn.kv_a_proj_with_mqa.weight", {c.kv_lora_rank + c.qk_rope_head_dim, h}, TensorRole::AttentionLinear, l});
        t.push_back({p + "self_attn.kv_a_layernorm.weight", {c.kv_lora_rank}, TensorRole::Norm, l});
        t.push_back({p + "self_attn.kv_b_proj.weight", {heads * (c.qk_nope_head_dim + c.v_head_dim), c.kv_lora_rank}, TensorRole::AttentionLinear, l});
        t.push_back({p + "self_attn.o_proj.weight", {h, heads * c.v_head_dim}, TensorRole::AttentionLinear, l});
        return;
    }
    if (c.layer_is_linear_attention(l)) {
        // A gated DeltaNet (Qwen3-Next's linear_attn), its in/out projections role mamba (token-mixer
        // linears of a state layer).
        const std::string q = p + "linear_attn.";
        const std::int64_t k = c.linear_key_dim(), v = c.linear_value_dim(), vh = c.linear_num_value_heads;
        if (c.linear_split_projections) {
            t.push_back({q + "in_proj_qkv.weight", {2 * k + v, h}, TensorRole::MambaLinear, l});
            t.push_back({q + "in_proj_z.weight", {v, h}, TensorRole::MambaLinear, l});
            t.push_back({q + "in_proj_b.weight", {vh, h}, TensorRole::MambaLinear, l});
            t.push_back({q + "in_proj_a.weight", {vh, h}, TensorRole::MambaLinear, l});
        } else {
            t.push_back({q + "in_proj_qkvz.weight", {2 * k + 2 * v, h}, TensorRole::MambaLinear, l});
            t.push_back({q + "in_proj_ba.weight", {2 * vh, h}, TensorRole::MambaLinear, l});
        }
        t.push_back({q + "conv1d.weight", {c.linear_conv_dim(), 1, c.linear_conv_kernel}, TensorRole::Bias, l});
        t.push_back({q + "dt_bias", {vh}, TensorRole::Bias, l});
        t.push_back({q + "A_log", {vh}, TensorRole::Bias, l});
        if (c.linear_fp32_decay_and_norm) t.back().fixed_dtype = DType::Fp32;
        t.push_back({q + "norm.weight", {c.linear_value_head_dim}, TensorRole::Norm, l});
        if (c.linear_fp32_decay_and_norm) t.back().fixed_dtype = DType::Fp32;
        t.push_back({q + "out_proj.weight", {h, v}, TensorRole::MambaLinear, l});
        return;
    }
    const std::string a = p + (c.is_hybrid_stack() ? "mixer." : "self_attn.");  // Nemotron-H: backbone.layers.N.mixer.q_proj
    t.push_back({a + "q_proj.weight", {c.attn_output_gate ? 2 * c.q_dim() : c.q_dim(), h}, TensorRole::AttentionLinear, l});
    t.push_back({a + "k_proj.weight", {c.kv_dim(), h}, TensorRole::AttentionLinear, l});
    t.push_back({a + "v_proj.weight", {c.kv_dim(), h}, TensorRole::AttentionLinear, l});
    t.push_back({a + "o_proj.weight", {h, c.q_dim()}, TensorRole::AttentionLinear, l});
    if (c.attention_bias) {
        t.push_back({a + "q_proj.bias", {c.q_dim()}, TensorRole::Bias, l});
        t.push_back({a + "k_proj.bias", {c.kv_dim()}, TensorRole::Bias, l});
        t.push_back({a + "v_proj.bias", {c.kv_dim()}, TensorRole::Bias, l});
    }
    if (c.o_proj_bias) t.push_back({a + "o_proj.bias", {h}, TensorRole::Bias, l});
    if (c.attention_sinks) t.push_back({a + "sinks", {c.num_attention_heads}, TensorRole::Bias, l});
    if (c.qk_norm) {
        t.push_back({a + "q_norm.weight", {c.head_dim}, TensorRole::Norm, l});
        t.push_back({a + "k_norm.weight", {c.head_dim}, TensorRole::Norm, l});
    }
}

// The MLP (dense, or router, routed and shared experts) of decoder layer `l`.
void append_mlp(std::vector<TensorInfo>& t, const ModelConfig& c, const std::string& p, std::int64_t l) {
    const std::int64_t h = c.hidden_size;
    if (!c.layer_is_moe(l)) {
        const std::int64_t i = c.intermediate_size;
        const std::string q = p + (c.is_hybrid_stack() ? "mixer." : c.llama4_moe ? "feed_forward." : "mlp.");
        if (c.mlp_gated) t.push_back({q + "gate_proj.weight", {i, h}, TensorRole::MlpLinear, l});
        t.push_back({q + "up_proj.weight", {i, h}, TensorRole::MlpLinear, l});
        if (c.mlp_bias) t.push_back({q + "up_proj.bias", {i}, TensorRole::Bias, l});
        t.push_back({q + "down_proj.weight", {h, i}, TensorRole::MlpLinear, l});
        if (c.mlp_bias) t.push_back({q + "down_proj.bias", {h}, TensorRole::Bias, l});
        return;
    }
    const std::int64_t e_i = c.moe_intermediate_size;
    if (c.gpt_oss_experts) {
        // The checkpoint stores each projection of all experts as one tensor (MXFP4
        // gate_up_proj_blocks [E, 2I, H/32, 16] and its scales, or bf16 [E, H, 2I]); listed here as
        // one [2I, H] and one [H, I] linear per expert, with their biases.
        t.push_back({p + "mlp.router.weight", {c.num_experts, h}, TensorRole::Router, l});
        t.push_back({p + "mlp.router.bias", {c.num_experts}, TensorRole::Bias, l});
        for (std::int64_t e = 0; e < c.num_experts; ++e) {
            const std::string q = p + "mlp.experts." + std::to_string(e) + ".";
            t.push_back({q + "gate_up_proj.weight", {2 * e_i, h}, TensorRole::ExpertLinear, l});
            t.push_back({q + "gate_up_proj.bias", {2 * e_i}, TensorRole::Bias, l});
            t.push_back({q + "down_proj.weight", {h, e_i}, TensorRole::ExpertLinear, l});
            t.push_back({q + "down_proj.bias", {h}, TensorRole::Bias, l});
        }
        return;
    }
    if (c.llama4_moe) {
        // Llama 4: the router, each layer's experts fused in two tensors (listed per expert), and
        // the shared expert.
        const std::string f = p + "feed_forward.";
        t.push_back({f + "router.weight", {c.num_experts, h}, TensorRole::Router, l});
        for (std::int64_t e = 0; e < c.num_experts; ++e) {
            const std::string q = f + "experts." + std::to_string(e) + ".";
            t.push_back({q + "gate_up_proj.weight", {2 * e_i, h}, TensorRole::ExpertLinear, l});
            t.push_back({q + "down_proj.weight", {h, e_i}, TensorRole::ExpertLinear, l});
        }
        const std::int64_t s = c.shared_expert_intermediate_size;
        if (s > 0) {
            t.push_back({f + "shared_expert.gate_proj.weight", {s, h}, TensorRole::SharedExpertLinear, l});
            t.push_back({f + "shared_expert.up_proj.weight", {s, h}, TensorRole::SharedExpertLinear, l});
            t.push_back({f + "shared_expert.down_proj.weight", {h, s}, TensorRole::SharedExpertLinear, l});
        }
        return;
    }
    if (c.model_type == "mixtral") {
        t.push_back({p + "block_sparse_moe.gate.weight", {c.num_experts, h}, TensorRole::Router, l});
        for (std::int64_t e = 0; e < c.num_experts; ++e) {
            const std::string q = p + "block_sparse_moe.experts." + std::to_string(e) + ".";
            t.push_back({q + "w1.weight", {e_i, h}, TensorRole::ExpertLinear, l});
            t.push_back({q + "w2.weight", {h, e_i}, TensorRole::ExpertLinear, l});
            t.push_back({q + "w3.weight", {e_i, h}, TensorRole::ExpertLinear, l});
        }
        return;
    }
    t.push_back({p + "mlp.gate.weight", {c.num_experts, h}, TensorRole::Router, l});
    t.back().never_quantized = c.deepseek_moe;
    if (c.router_score_bias) {
        TensorInfo bias{p + "mlp.gate.e_score_correction_bias", {c.num_experts}, TensorRole::Bias, l};
        bias.fixed_dtype = DType::Fp32;
        t.push_back(std::move(bias));
    }
    for (std::int64_t e = 0; e < c.num_experts; ++e) {
        const std::string q = p + "mlp.experts." + std::to_string(e) + ".";
        t.push_back({q + "gate_proj.weight", {e_i, h}, TensorRole::ExpertLinear, l});
        t.push_back({q + "up_proj.weight", {e_i, h}, TensorRole::ExpertLinear, l});
        t.push_back({q + "down_proj.weight", {h, e_i}, TensorRole::ExpertLinear, l});
    }
    if (c.shared_expert_intermediate_size > 0) {
        const std::int64_t s = c.shared_expert_intermediate_size;
        const std::string q = p + (c.deepseek_moe ? "mlp.shared_experts." : "mlp.shared_expert.");
        t.push_back({q + "gate_proj.weight", {s, h}, TensorRole::SharedExpertLinear, l});
        t.push_back({q + "up_proj.weight", {s, h}, TensorRole::SharedExpertLinear, l});
        t.push_back({q + "down_proj.weight", {h, s}, TensorRole::SharedExpertLinear, l});
        if (c.shared_expert_gate) t.push_back({p + "mlp.shared_expert_gate.weight", {1, h}, TensorRole::Router, l});
    }
}

// A Mamba2 mixer as Nemotron-H's checkpoints store it (transformers modeling_nemotron_h.py
// NemotronHMamba2Mixer; vLLM nemotron_h.py loads the same names, A_log as A).
void append_mamba(std::vector<TensorInfo>& t, const ModelConfig& c, const std::string& p, std::int64_t l) {
    const std::int64_t h = c.hidden_size, i = c.mamba_intermediate_size(), conv = c.mamba_conv_dim(), heads = c.mamba_num_heads;
    const std::string q = p + "mixer.";
    t.push_back({q + "in_proj.weight", {i + conv + heads, h}, TensorRole::MambaLinear, l});
    if (c.mamba_proj_bias) t.push_back({q + "in_proj.bias", {i + conv + heads}, TensorRole::Bias, l});
    t.push_back({q + "conv1d.weight", {conv, 1, c.mamba_conv_kernel}, TensorRole::Bias, l});
    if (c.mamba_conv_bias) t.push_back({q + "conv1d.bias", {conv}, TensorRole::Bias, l});
    t.push_back({q + "dt_bias", {heads}, TensorRole::Bias, l});
    t.push_back({q + "A_log", {heads}, TensorRole::Bias, l});
    t.push_back({q + "D", {heads}, TensorRole::Bias, l});
    t.push_back({q + "norm.weight", {i}, TensorRole::Norm, l});
    t.push_back({q + "out_proj.weight", {h, i}, TensorRole::MambaLinear, l});
    if (c.mamba_proj_bias) t.push_back({q + "out_proj.bias", {h}, TensorRole::Bias, l});
}

// A hybrid stack as Nemotron-H's checkpoints store it: backbone.embeddings, one norm and one mixer
// per layer, backbone.norm_f, lm_head.
std::vector<TensorInfo> hybrid_stack_inventory(const ModelConfig& c) {
    std::vector<TensorInfo> t;
    const std::int64_t h = c.hidden_size;
    t.push_back({"backbone.embeddings.weight", {c.vocab_size, h}, TensorRole::Embedding, -1});
    for (std::int64_t l = 0; l < c.num_layers; ++l) {
        const std::string p = "backbone.layers." + std::to_string(l) + ".";
        t.push_back({p + "norm.weight", {h}, TensorRole::Norm, l});
        switch (c.layer_kind(l)) {
            case LayerKind::Mamba: append_mamba(t, c, p, l); break;
            case LayerKind::Attention: append_attention(t, c, p, l); break;
            case LayerKind::Mlp: append_mlp(t, c, p, l); break;
        }
    }
    t.push_back({"backbone.norm_f.weight", {h}, TensorRole::Norm, -1});
    if (!c.tie_word_embeddings) t.push_back({"lm_head.weight", {c.vocab_size, h}, TensorRole::LmHead, -1});
    return t;
}

// Gemma 3's vision encoder as its checkpoints store it (transformers modeling_siglip.py
// SiglipVisionTransformer without the pooling head, vision_use_head false; modeling_gemma3.py
// Gemma3MultiModalProjector): a patch embedding, a learned position per patch, num_hidden_layers
// pre-norm blocks with biased q/k/v/out projections and a biased two-layer MLP, a final LayerNorm,
// and the projector's [vision hidden, text hidden] matrix and RMSNorm.
// Qwen3-VL's vision transformer as Qwen3.5 checkpoints store it (model.visual.; vLLM 0.20.1
// qwen3_vl.py Qwen3_VisionPatchEmbed, Qwen3_VisionBlock, Qwen3_VisionPatchMerger).
void append_qwen3_vl_vision(std::vector<TensorInfo>& t, const ModelConfig& c) {
    const std::int64_t v = c.vision_hidden_size, i = c.vision_intermediate_size;
    const std::int64_t merged = v * c.vision_spatial_merge_size * c.vision_spatial_merge_size, out = c.vision_out_hidden_size;
    const std::string e = "model.visual.";
    const auto add = [&](const std::string& name, std::vector<std::int64_t> shape) { t.push_back({name, std::move(shape), TensorRole::Vision, -1}); };
    add(e + "patch_embed.proj.weight", {v, c.vision_channels, c.vision_temporal_patch_size, c.vision_patch_size, c.vision_patch_size});
    add(e + "patch_embed.proj.bias", {v});
    add(e + "pos_embed.weight", {c.vision_position_embeddings, v});
    for (std::int64_t l = 0; l < c.vision_layers; ++l) {
        const std::string p = e + "blocks." + std::to_string(l) + ".";
        for (const char* n : {"norm1", "norm2"}) {
            add(p + n + ".weight", {v});
            add(p + n + ".bias", {v});
        }
        add(p + "attn.qkv.weight", {3 * v, v});
        add(p + "attn.qkv.bias", {3 * v});
        add(p + "attn.proj.weight", {v, v});
        add(p + "attn.proj.bias", {v});
        add(p + "mlp.linear_fc1.weight", {i, v});
        add(p + "mlp.linear_fc1.bias", {i});
        add(p + "mlp.linear_fc2.weight", {v, i});
        add(p + "mlp.linear_fc2.bias", {v});
    }
    // The merger normalises each patch before the 2 x 2 shuffle; a deepstack merger after it.
    const auto merger = [&](const std::string& p, std::int64_t norm_width) {
        add(p + "norm.weight", {norm_width});
        add(p + "norm.bias", {norm_width});
        add(p + "linear_fc1.weight", {merged, merged});
        add(p + "linear_fc1.bias", {merged});
        add(p + "linear_fc2.weight", {out, merged});
        add(p + "linear_fc2.bias", {out});
    };
    merger(e + "merger.", v);
    for (std::int64_t k = 0; k < c.vision_deepstack_mergers; ++k) merger(e + "deepstack_merger_list." + std::to_string(k) + ".", merged);
}

void append_llama4_vision(std::vector<TensorInfo>& t, const ModelConfig& c) {
    const std::int64_t v = c.vision_hidden_size, i = c.vision_intermediate_size, side = c.vision_image_size / c.vision_patch_size;
    const std::string e = "vision_model.";
    const auto add = [&](const std::string& name, std::vector<std::int64_t> shape) { t.push_back({name, std::move(shape), TensorRole::Vision, -1}); };
    add(e + "class_embedding", {v});
    add(e + "positional_embedding_vlm", {side * side + 1, v});
    add(e + "patch_embedding.linear.weight", {v, c.vision_channels * c.vision_patch_size * c.vision_patch_size});
    for (const char* n : {"layernorm_pre", "layernorm_post"}) {
        add(e + n + ".weight", {v});
        add(e + n + ".bias", {v});
    }
    for (std::int64_t l = 0; l < c.vision_layers; ++l) {
        const std::string p = e + "model.layers." + std::to_string(l) + ".";
        for (const char* n : {"q_proj", "k_proj", "v_proj", "o_proj"}) {
            add(p + "self_attn." + n + ".weight", {v, v});
            add(p + "self_attn." + n + ".bias", {v});
        }
        add(p + "mlp.fc1.weight", {i, v});
        add(p + "mlp.fc1.bias", {i});
        add(p + "mlp.fc2.weight", {v, i});
        add(p + "mlp.fc2.bias", {v});
        for (const char* n : {"input_layernorm", "post_attention_layernorm"}) {
            add(p + n + ".weight", {v});
            add(p + n + ".bias", {v});
        }
    }
    add(e + "vision_adapter.mlp.fc1.weight", {c.vision_projector_input_dim, i});
    add(e + "vision_adapter.mlp.fc2.weight", {c.vision_projector_output_dim, c.vision_projector_output_dim});
    add("multi_modal_projector.linear_1.weight", {c.hidden_size, c.vision_out_hidden_size});
}

void append_vision(std::vector<TensorInfo>& t, const ModelConfig& c) {
    if (c.vision_qwen3_vl) return append_qwen3_vl_vision(t, c);
    if (c.vision_llama4) return append_llama4_vision(t, c);
    const std::int64_t v = c.vision_hidden_size, i = c.vision_intermediate_size, side = c.vision_image_size / c.vision_patch_size;
    const std::string e = "vision_tower.vision_model.";
    const auto add = [&](const std::string& name, std::vector<std::int64_t> shape) { t.push_back({name, std::move(shape), TensorRole::Vision, -1}); };
    add(e + "embeddings.patch_embedding.weight", {v, c.vision_channels, c.vision_patch_size, c.vision_patch_size});
    add(e + "embeddings.patch_embedding.bias", {v});
    add(e + "embeddings.position_embedding.weight", {side * side, v});
    for (std::int64_t l = 0; l < c.vision_layers; ++l) {
        const std::string p = e + "encoder.layers." + std::to_string(l) + ".";
        add(p + "layer_norm1.weight", {v});
        add(p + "layer_norm1.bias", {v});
        for (const char* proj : {"q_proj", "k_proj", "v_proj", "out_proj"}) {
            add(p + "self_attn." + proj + ".weight", {v, v});
            add(p + "self_attn." + proj + ".bias", {v});
        }
        add(p + "layer_norm2.weight", {v});
        add(p + "layer_norm2.bias", {v});
        add(p + "mlp.fc1.weight", {i, v});
        add(p + "mlp.fc1.bias", {i});
        add(p + "mlp.fc2.weight", {v, i});
        add(p + "mlp.fc2.bias", {v});
    }
    add(e + "post_layernorm.weight", {v});
    add(e + "post_layernorm.bias", {v});
    add("multi_modal_projector.mm_input_projection_weight", {v, c.hidden_size});
    add("multi_modal_projector.mm_soft_emb_norm.weight", {v});
}

}  // namespace

std::vector<TensorInfo> tensor_inventory(const ModelConfig& c) {
    validate_model(c);
    if (c.is_hybrid_stack()) return hybrid_stack_inventory(c);
    std::vector<TensorInfo> t;
    const std::int64_t h = c.hidden_size;
    const std::string& m = c.text_prefix;
    t.push_back({m + "embed_tokens.weight", {c.vocab_size, h}, TensorRole::Embedding, -1});
    for (std::int64_t l = 0; l < c.num_layers; ++l) {
        const std::string p = m + "layers." + std::to_string(l) + ".";
        t.push_back({p + "input_layernorm.weight", {h}, TensorRole::Norm, l});
        append_attention(t, c, p, l);
        t.push_back({p + "post_attention_layernorm.weight", {h}, TensorRole::Norm, l});
        if (c.sandwich_norms) {
            t.push_back({p + "pre_feedforward_layernorm.weight", {h}, TensorRole::Norm, l});
            t.push_back({p + "post_feedforward_layernorm.weight", {h}, TensorRole::Norm, l});
        }
        append_mlp(t, c, p, l);
    }
    t.push_back({m + "norm.weight", {h}, TensorRole::Norm, -1});
    // The head sits beside the text model's "model." ("language_model.lm_head.weight" in a
    // multimodal checkpoint).
    const std::string head_prefix = m.ends_with("model.") ? m.substr(0, m.size() - 6) : std::string();
    const std::string head = c.lm_head_name.empty() ? head_prefix + "lm_head.weight" : c.lm_head_name;
    if (!c.tie_word_embeddings) t.push_back({head, {c.vocab_size, h}, TensorRole::LmHead, -1});
    if (c.has_vision()) append_vision(t, c);
    if (c.qwen3_next_mtp) {
        // Qwen3-Next's MTP module (vLLM 0.11.0 qwen3_next_mtp.py): fc [hidden, 2 x hidden] over the
        // two normed inputs, one full-attention decoder layer, a final norm; it shares the model's
        // embedding and head. Loaded only for MTP speculative decoding.
        const std::size_t first = t.size();
        const std::int64_t l = c.num_layers;
        t.push_back({"mtp.fc.weight", {h, 2 * h}, TensorRole::Projection, l});
        t.push_back({"mtp.pre_fc_norm_embedding.weight", {h}, TensorRole::Norm, l});
        t.push_back({"mtp.pre_fc_norm_hidden.weight", {h}, TensorRole::Norm, l});
        ModelConfig full = c;
        full.linear_attention_layers.clear();  // the MTP layer is full attention
        const std::string p = "mtp.layers.0.";
        t.push_back({p + "input_layernorm.weight", {h}, TensorRole::Norm, l});
        append_attention(t, full, p, l);
        t.push_back({p + "post_attention_layernorm.weight", {h}, TensorRole::Norm, l});
        append_mlp(t, full, p, l);
        t.push_back({"mtp.norm.weight", {h}, TensorRole::Norm, l});
        for (std::size_t k = first; k < t.size(); ++k) t[k].speculative = true;
    }
    // MTP modules, as DeepSeek-V3's checkpoint stores them after the decoder layers (README_WEIGHTS.md):
    // its own copies of the embedding and the output head, enorm and hnorm, eh_proj [h, 2h] over the
    // two normed inputs, one more decoder layer, and shared_head's norm and head.
    for (std::int64_t j = 0; j < c.mtp_layers; ++j) {
        const std::int64_t l = c.num_layers + j;
        const std::size_t first = t.size();
        const std::string p = "model.layers." + std::to_string(l) + ".";
        t.push_back({p + "embed_tokens.weight", {c.vocab_size, h}, TensorRole::Embedding, l});
        t.push_back({p + "enorm.weight", {h}, TensorRole::Norm, l});
        t.push_back({p + "hnorm.weight", {h}, TensorRole::Norm, l});
        t.push_back({p + "eh_proj.weight", {h, 2 * h}, TensorRole::Projection, l});
        t.push_back({p + "input_layernorm.weight", {h}, TensorRole::Norm, l});
        append_attention(t, c, p, l);
        t.push_back({p + "post_attention_layernorm.weight", {h}, TensorRole::Norm, l});
        append_mlp(t, c, p, l);
        t.push_back({p + "shared_head.norm.weight", {h}, TensorRole::Norm, l});
        t.push_back({p + "shared_head.head.weight", {c.vocab_size, h}, TensorRole::LmHead, l});
        for (std::size_t k = first; k < t.size(); ++k) t[k].speculative = true;
    }
    return t;
}

std::vector<TensorInfo> compress_inventory(const std::vector<TensorInfo>& inventory) {
    std::vector<TensorInfo> out;
    std::size_t last = 0;  // the entry the previous tensor joined: inventories repeat one layer's sequence
    for (const TensorInfo& t : inventory) {
        const auto same = [&](const TensorInfo& e) {
            return e.role == t.role && e.shape == t.shape && e.speculative == t.speculative && e.fixed_dtype == t.fixed_dtype &&
                   e.never_quantized == t.never_quantized;
        };
        std::size_t k = last < out.size() && same(out[last]) ? last : 0;
        while (k < out.size() && !same(out[k])) ++k;
        if (k == out.size()) {
            out.push_back(t);
            out.back().count = 0;
        }
        out[k].count += t.count;
        last = k;
    }
    return out;
}

ParameterCounts count_parameters(const ModelConfig& c) { return count_parameters(c, tensor_inventory(c)); }

ParameterCounts count_parameters(const ModelConfig& c, const std::vector<TensorInfo>& inventory) {
    ParameterCounts p;
    std::int64_t expert_params_per_layer_sum = 0;
    std::int64_t moe_layers = 0;
    for (const TensorInfo& t : inventory) {
        const std::int64_t n = t.elements() * t.count;
        p.total += n;
        if (t.speculative) {
            p.speculative += n;
            continue;
        }
        if (t.role == TensorRole::Vision) {
            p.vision += n;
            continue;
        }
        switch (t.role) {
            case TensorRole::Embedding: p.embedding += n; break;
            case TensorRole::LmHead: p.lm_head += n; break;
            case TensorRole::Norm: p.norms += n; break;
            case TensorRole::Bias: p.biases += n; break;
            case TensorRole::Router: p.routers += n; break;
            case TensorRole::ExpertLinear:
                p.experts += n;
                p.block_linears += n;
                p.block_linear_count += t.count;
                expert_params_per_layer_sum += n;
                break;
            default:
                p.block_linears += n;
                p.block_linear_count += t.count;
        }
    }
    for (std::int64_t l = 0; l < c.num_layers; ++l) moe_layers += c.layer_is_moe(l) ? 1 : 0;
    p.active_block_linears = p.block_linears - p.experts;
    if (c.is_moe() && moe_layers > 0)
        p.active_block_linears += expert_params_per_layer_sum / c.num_experts * c.experts_per_token;
    return p;
}

}  // namespace quantplan
