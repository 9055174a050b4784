#pragma once
// Transformer architectures as read from a Hugging Face config.json, and the tensor inventory a
// checkpoint of that architecture holds (names as the checkpoint spells them).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/base/dtype.h"

namespace quantplan {

struct QuantizationConfig;  // core/checkpoint/quant_config.h

// How a model's attention layers store their cache.
enum class AttentionKind : std::uint8_t {
    Gqa,  // K and V per KV head (multi-head, grouped-query and multi-query attention)
    Mla,  // multi-head latent attention (DeepSeek-V2/V3, Kimi-K2): one compressed latent per token
};

// What one decoder layer of a hybrid stack holds (Nemotron-H's hybrid_override_pattern: 'M' a
// Mamba2 mixer, '*' attention, '-' an MLP; each layer is one norm and one of them).
enum class LayerKind : std::uint8_t { Mamba, Attention, Mlp };

// The attention part of an architecture: heads, the cache's layout (GQA or MLA), and which layers
// attend to a window, a chunk or the whole context.
struct AttentionConfig {
    std::int64_t num_attention_heads = 0;
    std::int64_t num_kv_heads = 0;           // GQA: key/value heads
    std::int64_t head_dim = 0;               // explicit head_dim or hidden_size / num_attention_heads
    bool attention_bias = false;             // q/k/v projections carry a bias (Qwen2)
    bool qk_norm = false;                    // per-head RMSNorm on q and k (Qwen3)
    // Multi-head latent attention (attention == Mla). Per layer: q through a rank-q_lora_rank
    // bottleneck (q_a_proj, q_a_layernorm, q_b_proj; q_proj when q_lora_rank is 0), the latent
    // kv_a_proj_with_mqa [kv_lora_rank + qk_rope_head_dim, hidden] with kv_a_layernorm, its
    // up-projection kv_b_proj [heads x (qk_nope_head_dim + v_head_dim), kv_lora_rank] and o_proj
    // [hidden, heads x v_head_dim]. The cache holds kv_lora_rank + qk_rope_head_dim values per token
    // and layer, shared by every head (vLLM's MLAAttentionSpec).
    AttentionKind attention = AttentionKind::Gqa;
    std::int64_t q_lora_rank = 0;
    std::int64_t kv_lora_rank = 0;
    std::int64_t qk_nope_head_dim = 0;
    std::int64_t qk_rope_head_dim = 0;
    std::int64_t v_head_dim = 0;
    // Sliding-window attention on some layers (gpt-oss: every other layer, a 128-token window):
    // sliding_layers[l] is true when layer l attends to at most `sliding_window` tokens. Empty:
    // every layer attends to the whole context.
    std::int64_t sliding_window = 0;
    std::vector<bool> sliding_layers;
    // The window is the config's one sliding_window for every layer (Mistral, Mixtral), not a
    // per-layer pattern: vLLM applies it, SGLang serves such a model with full attention
    // (engine::EngineDefaults::model_wide_sliding_window).
    bool sliding_window_model_wide = false;
    bool attention_sinks = false;            // gpt-oss: a learned sink logit per head (self_attn.sinks [heads])
    bool o_proj_bias = false;                // o_proj carries a bias too (gpt-oss)
    // Chunked local attention (Llama 4): layer l with chunked_layers[l] attends only to the earlier
    // tokens of its own attention_chunk_size-token chunk; the others attend to the whole context.
    std::int64_t attention_chunk_size = 0;
    std::vector<bool> chunked_layers;
    // Attention with an output gate (Qwen3-Next attn_output_gate): q_proj also produces a sigmoid
    // gate per head, 2 x heads x head_dim rows.
    bool attn_output_gate = false;

    friend bool operator==(const AttentionConfig&, const AttentionConfig&) = default;
};

// The MLP part: a dense width, or the routed and shared experts of a mixture of experts, and how
// each family names them.
struct MlpConfig {
    std::int64_t intermediate_size = 0;      // dense MLP width (0 when every layer is MoE and no dense width is given)
    // Mixture of experts (num_experts == 0: dense).
    std::int64_t num_experts = 0;
    std::int64_t experts_per_token = 0;
    std::int64_t moe_intermediate_size = 0;  // width of one routed expert
    std::int64_t shared_expert_intermediate_size = 0;  // Qwen2-MoE style shared expert (0: none)
    std::vector<std::int64_t> dense_layers;  // layers that keep a dense MLP in an MoE model (mlp_only_layers)
    bool shared_expert_gate = false;         // Qwen2-MoE: a sigmoid gate [1, hidden] scales the shared expert
    bool router_score_bias = false;          // DeepSeek-V3 noaux_tc routing: an fp32 e_score_correction_bias [experts]
    // DeepSeek-style naming: shared experts under mlp.shared_experts (n_shared_experts x
    // moe_intermediate_size wide), no shared-expert gate.
    bool deepseek_moe = false;
    // gpt-oss experts: gate and up fused in one [2 x I, hidden] matrix per expert, with biases, and a
    // router with a bias (mlp.router).
    bool gpt_oss_experts = false;
    // Llama 4's MoE naming (transformers modeling_llama4.py Llama4TextMoe): feed_forward.router, the
    // routed experts of a layer fused in gate_up_proj [E, hidden, 2I] and down_proj [E, I, hidden]
    // (listed here as one [2I, hidden] and one [hidden, I] linear per expert), and a shared expert
    // feed_forward.shared_expert of width shared_expert_intermediate_size.
    bool llama4_moe = false;
    bool mlp_gated = true;                   // false: an up/down MLP without gate_proj (Nemotron-H's relu2)
    bool mlp_bias = false;                   // the MLP's projections carry biases (mlp_bias)

    friend bool operator==(const MlpConfig&, const MlpConfig&) = default;
};

// The state-space part of a hybrid stack: which layers hold a Mamba2 mixer or a gated DeltaNet instead
// of attention, and the constant state each holds per sequence.
struct StateSpaceConfig {
    // A hybrid stack (Nemotron-H): layer_kinds[l] says what layer l holds. Empty: every layer is
    // attention and an MLP (or MoE).
    std::vector<LayerKind> layer_kinds;
    // Mamba2 mixers (transformers modeling_nemotron_h.py NemotronHMamba2Mixer; vLLM
    // mamba_mixer2.py): in_proj [I + conv_dim + heads, hidden] with I = mamba_num_heads x
    // mamba_head_dim and conv_dim = I + 2 x n_groups x ssm_state_size, a depthwise conv1d of
    // conv_kernel taps over conv_dim channels, dt_bias, A_log and D per head, a gated RMSNorm over
    // I, and out_proj [hidden, I]. Each holds a constant state per sequence: (conv_kernel - 1) x
    // conv_dim conv values and heads x head_dim x ssm_state_size SSM values.
    std::int64_t mamba_num_heads = 0;
    std::int64_t mamba_head_dim = 0;
    std::int64_t ssm_state_size = 0;
    std::int64_t mamba_n_groups = 0;
    std::int64_t mamba_conv_kernel = 0;
    bool mamba_proj_bias = false;            // in_proj and out_proj carry a bias (use_bias)
    bool mamba_conv_bias = false;            // conv1d carries a bias (use_conv_bias)
    // Gated DeltaNet layers (Qwen3-Next: transformers modeling_qwen3_next.py Qwen3NextGatedDeltaNet;
    // vLLM 0.11.0 qwen3_next.py): linear_attention_layers[l] is true when layer l's token mixer is
    // linear attention instead of attention (its MLP stays). in_proj_qkvz [2 x key_dim + 2 x
    // value_dim, hidden] and in_proj_ba [2 x value heads, hidden] with key_dim = key heads x
    // key_head_dim and value_dim = value heads x value_head_dim, a depthwise conv1d of
    // linear_conv_kernel taps over conv_dim = 2 x key_dim + value_dim channels, dt_bias and A_log
    // per value head, a gated RMSNorm over value_head_dim and out_proj [hidden, value_dim]. Each holds
    // a constant state per sequence: (kernel - 1) x conv_dim conv values and value heads x
    // key_head_dim x value_head_dim recurrent values.
    std::vector<bool> linear_attention_layers;
    std::int64_t linear_num_key_heads = 0;
    std::int64_t linear_num_value_heads = 0;
    std::int64_t linear_key_head_dim = 0;
    std::int64_t linear_value_head_dim = 0;
    std::int64_t linear_conv_kernel = 0;
    // Qwen3.5 stores the gated DeltaNet's input projections apart: in_proj_qkv [2 x key_dim +
    // value_dim, hidden], in_proj_z [value_dim, hidden], in_proj_b and in_proj_a [value heads,
    // hidden] (vLLM 0.20.1 qwen3_5.py load_weights); the same parameters as Qwen3-Next's fused pair.
    bool linear_split_projections = false;
    // Bytes of one recurrent (temporal) state value: the model dtype's 2, or 4 when the config's
    // mamba_ssm_dtype is float32 (Qwen3.5: vLLM 0.20.1 models/config.py
    // Qwen3_5ForConditionalGenerationConfig sets mamba_ssm_cache_dtype from it). The conv state stays
    // in the model dtype.
    std::int64_t linear_state_value_bytes = 2;
    // The DeltaNet's A_log and gated-norm weight are stored in float32 (the Qwen3.5 MoE checkpoints'
    // headers: 35B-A3B, 122B-A10B and 397B-A17B; models/README.md).
    bool linear_fp32_decay_and_norm = false;

    friend bool operator==(const StateSpaceConfig&, const StateSpaceConfig&) = default;
};

// The vision part: an encoder stored beside the language model (loaded, never read by a text step).
struct VisionConfig {
    // A vision encoder stored beside the language model (Gemma 3's SigLIP tower and its projector
    // into the text embedding). The engine loads it (resident bytes); a text decode step never reads
    // it. vision_layers == 0: none.
    std::int64_t vision_hidden_size = 0;
    std::int64_t vision_intermediate_size = 0;
    std::int64_t vision_layers = 0;
    std::int64_t vision_image_size = 0;
    std::int64_t vision_patch_size = 0;
    std::int64_t vision_channels = 0;
    // Qwen3-VL's vision transformer instead of SigLIP (Qwen3.5: vLLM 0.20.1 qwen3_vl.py
    // Qwen3_VisionTransformer under model.visual.): a Conv3d patch embedding of
    // vision_temporal_patch_size x patch x patch with a bias, a learned position table of
    // vision_position_embeddings rows, blocks of LayerNorms, a qkv / proj attention and an
    // fc1 / fc2 MLP (all with biases), and a patch merger (LayerNorm, then fc1 over
    // spatial_merge^2 x hidden and fc2 into vision_out_hidden_size), plus one merger per
    // deepstack index. vision_image_size is 0 for it (images of any size).
    bool vision_qwen3_vl = false;
    // Llama 4's vision model (transformers 4.51.0 modeling_llama4.py Llama4VisionModel under
    // vision_model., Llama4MultiModalProjector): an unfold patch embedding without bias, a class
    // embedding and a position per patch and one more, pre/post LayerNorms, blocks of biased
    // q/k/v/o and fc1/fc2 with two LayerNorms, a pixel-shuffle adapter (fc1 from intermediate_size
    // to projector_input_dim, fc2 of projector_output_dim, no biases) and the projector
    // [text hidden, vision_output_dim] (vision_out_hidden_size).
    bool vision_llama4 = false;
    std::int64_t vision_projector_input_dim = 0;
    std::int64_t vision_projector_output_dim = 0;
    std::int64_t vision_temporal_patch_size = 0;
    std::int64_t vision_position_embeddings = 0;
    std::int64_t vision_spatial_merge_size = 0;
    std::int64_t vision_out_hidden_size = 0;
    std::int64_t vision_deepstack_mergers = 0;

    friend bool operator==(const VisionConfig&, const VisionConfig&) = default;
};

// The architecture fields quantplan needs, in named parts (attention, MLP/MoE, state space, vision)
// with what is the whole model's here. Sizes are element counts. The parts are bases, so a field is
// still `m.num_kv_heads`.
struct ModelConfig : AttentionConfig, MlpConfig, StateSpaceConfig, VisionConfig {
    std::string name;             // display name (bundled name or the path it came from)
    std::string model_type;       // config.json model_type: llama, mistral, mixtral, qwen2, qwen3, qwen3_moe, qwen2_moe
    std::int64_t hidden_size = 0;
    std::int64_t num_layers = 0;
    std::int64_t vocab_size = 0;
    bool tie_word_embeddings = false;        // true: no separate lm_head tensor
    std::int64_t max_position_embeddings = 0;
    // Multi-token-prediction modules the checkpoint stores after the decoder layers
    // (num_nextn_predict_layers; DeepSeek-V3's model.layers.61). Engines load them only for MTP
    // speculative decoding: they count in the checkpoint, not in what a plain server holds.
    std::int64_t mtp_layers = 0;
    // Parts of the checkpoint its config.json describes that quantplan does not count (Llama 4's
    // vision encoder), for the one line that says so; empty: everything is counted.
    std::string not_counted;
    // Gemma 3 (transformers modeling_gemma3.py): four RMSNorms per decoder layer (input,
    // post-attention, pre- and post-feedforward) besides the q/k norms.
    bool sandwich_norms = false;
    // Where the language model's tensors sit in the checkpoint: "model." for a causal LM,
    // "language_model.model." for Gemma3ForConditionalGeneration as its checkpoints store it.
    std::string text_prefix = "model.";
    // The output head's tensor name when it does not sit beside text_prefix's "model."
    // (Qwen3.5's "lm_head.weight" beside "model.language_model."); empty: derived from text_prefix.
    std::string lm_head_name;
    // Qwen3-Next's multi-token-prediction module under mtp. (loaded only for MTP speculative decoding).
    bool qwen3_next_mtp = false;
    // The quantization its config.json declares (quantization_config), parsed; null when it
    // declares none. Scheme `native` prices the checkpoint by it. When the declaration cannot be
    // read, `declared_quantization_error` says why and `native` is refused with that line.
    std::shared_ptr<const QuantizationConfig> declared_quantization;
    std::string declared_quantization_error;

    bool is_moe() const { return num_experts > 0; }
    bool has_vision() const { return vision_layers > 0; }
    bool is_hybrid_stack() const { return !layer_kinds.empty(); }
    LayerKind layer_kind(std::int64_t layer) const {
        return layer >= 0 && static_cast<std::size_t>(layer) < layer_kinds.size() ? layer_kinds[static_cast<std::size_t>(layer)] : LayerKind::Attention;
    }
    // Layers with attention (a cache per token): every layer, or a hybrid stack's '*' layers.
    std::int64_t attention_layer_count() const;
    // Mamba2 layers (a constant state per sequence).
    std::int64_t mamba_layer_count() const;
    // Layers with an MLP (or MoE): every layer, or a hybrid stack's '-' layers.
    std::int64_t mlp_layer_count() const;
    bool layer_is_linear_attention(std::int64_t layer) const { return flag_of(linear_attention_layers, layer); }
    std::int64_t linear_attention_layer_count() const;
    // Decoder layers as the engine step model's per-layer cost counts them (norms, residual adds,
    // rotary, activation: fitted on layers of a token mixer and an MLP): num_layers, or for a
    // hybrid stack, whose layers hold one mixer each (Nemotron-H), half of them, rounded up.
    std::int64_t per_layer_cost_layers() const { return is_hybrid_stack() ? (num_layers + 1) / 2 : num_layers; }
    // Token-mixer calls in one forward (attention, Mamba or gated DeltaNet): num_layers, or a hybrid
    // stack's attention and Mamba layers (not its MLP layers).
    std::int64_t token_mixer_layers() const { return is_hybrid_stack() ? attention_layer_count() + mamba_layer_count() : num_layers; }
    std::int64_t linear_key_dim() const { return linear_num_key_heads * linear_key_head_dim; }
    std::int64_t linear_value_dim() const { return linear_num_value_heads * linear_value_head_dim; }
    std::int64_t linear_conv_dim() const { return 2 * linear_key_dim() + linear_value_dim(); }
    std::int64_t mamba_intermediate_size() const { return mamba_num_heads * mamba_head_dim; }
    std::int64_t mamba_conv_dim() const { return mamba_intermediate_size() + 2 * mamba_n_groups * ssm_state_size; }
    // True when layer `layer` routes its MLP through experts.
    bool layer_is_moe(std::int64_t layer) const;
    bool is_mla() const { return attention == AttentionKind::Mla; }
    bool layer_is_sliding(std::int64_t layer) const { return flag_of(sliding_layers, layer); }
    std::int64_t sliding_layer_count() const;
    bool layer_is_chunked(std::int64_t layer) const { return flag_of(chunked_layers, layer); }
    std::int64_t chunked_layer_count() const;
    // Query projection width: num_attention_heads * head_dim (MLA: heads x (qk_nope + qk_rope)).
    std::int64_t q_dim() const { return num_attention_heads * head_dim; }
    // Key (or value) projection width: num_kv_heads * head_dim.
    std::int64_t kv_dim() const { return num_kv_heads * head_dim; }
    // Values one token caches in one attention layer: K and V of every KV head (GQA), or the
    // latent and its rotary part (MLA: kv_lora_rank + qk_rope_head_dim, no K/V pair).
    std::int64_t cache_values_per_token_per_layer() const {
        return is_mla() ? kv_lora_rank + qk_rope_head_dim : 2 * num_kv_heads * head_dim;
    }
    // How many ways the cache of one layer splits over tensor-parallel ranks: the KV heads (GQA;
    // a rank holds ceil(heads / tp) of them), or 1 (MLA: every rank holds the whole latent).
    std::int64_t cache_split_heads() const { return is_mla() ? 1 : num_kv_heads; }

    friend bool operator==(const ModelConfig&, const ModelConfig&) = default;

private:
    // A per-layer flag (sliding, chunked, linear attention); false past the list (an empty list: none).
    static bool flag_of(const std::vector<bool>& flags, std::int64_t layer) {
        return layer >= 0 && static_cast<std::size_t>(layer) < flags.size() && flags[static_cast<std::size_t>(layer)];
    }
};

// What a tensor is for; decides whether a scheme covers it.
enum class TensorRole : std::uint8_t {
    Embedding,        // input embedding table [vocab, hidden]
    LmHead,           // output projection [vocab, hidden]
    AttentionLinear,  // q/k/v/o projections
    MambaLinear,      // a Mamba2 mixer's in_proj and out_proj (covered, like attention, as the token mixer's linears)
    MlpLinear,        // dense MLP projections
    ExpertLinear,     // routed expert projections
    SharedExpertLinear,  // shared expert projections (priced like MLP)
    Router,           // MoE gate [experts, hidden]
    Norm,             // RMSNorm weights
    Projection,       // linears outside attention and MLP that exporters keep in the model dtype (MTP's eh_proj)
    Bias,             // linear biases and small per-channel parameters (DeepSeek's router score bias; Mamba2's conv1d, dt_bias, A_log, D)
    Vision,           // a vision encoder and its projector (Gemma 3's SigLIP): stored and loaded, kept in the model dtype, not read by a text step
};

// Number of TensorRole values.
inline constexpr std::size_t kTensorRoleCount = static_cast<std::size_t>(TensorRole::Vision) + 1;

// Lower-case name of a role ("attention", "mlp", "experts", ...), used as JSON key.
const char* tensor_role_name(TensorRole role);

// One tensor of a checkpoint.
struct TensorInfo {
    std::string name;                 // e.g. "model.layers.0.self_attn.q_proj.weight"
    std::vector<std::int64_t> shape;  // [rows, cols] for linears: [out N, in K]
    TensorRole role;
    std::int64_t layer = -1;          // decoder layer index, -1 outside the blocks
    std::int64_t count = 1;           // identical tensors this entry stands for (compress_inventory)
    // Stored in the checkpoint but loaded only for speculative decoding (an MTP module's tensors).
    bool speculative = false;
    // Stored in this dtype whatever the scheme (DeepSeek's fp32 e_score_correction_bias); nullopt:
    // the scheme or the model dtype decides.
    std::optional<DType> fixed_dtype = std::nullopt;
    // The model's code builds this module without a quantization config, so no export quantizes
    // it (DeepSeek-V3's router: vLLM deepseek_v2.py makes the gate with quant_config=None).
    bool never_quantized = false;

    std::int64_t elements() const;
    bool is_linear() const {
        return role == TensorRole::AttentionLinear || role == TensorRole::MambaLinear || role == TensorRole::MlpLinear || role == TensorRole::ExpertLinear ||
               role == TensorRole::SharedExpertLinear || role == TensorRole::LmHead || role == TensorRole::Embedding ||
               role == TensorRole::Router || role == TensorRole::Projection;
    }
};

// Every tensor a checkpoint of `config` holds, in checkpoint order (layers ascending).
std::vector<TensorInfo> tensor_inventory(const ModelConfig& config);

// The same inventory with tensors of equal role and shape merged into one entry (the first one's
// name and layer, `count` summed), in order of first appearance: budgets and parameter counts are
// the same, and an MoE model's tens of thousands of expert tensors become a handful of entries.
std::vector<TensorInfo> compress_inventory(const std::vector<TensorInfo>& inventory);

// Parameter counts by group (elements).
struct ParameterCounts {
    std::int64_t total = 0;
    std::int64_t block_linears = 0;   // attention + MLP + experts + shared experts inside the decoder blocks
    std::int64_t embedding = 0;       // input embedding table
    std::int64_t lm_head = 0;         // 0 when tied
    std::int64_t norms = 0;
    std::int64_t biases = 0;
    std::int64_t routers = 0;
    std::int64_t experts = 0;         // routed expert parameters (part of block_linears)
    std::int64_t speculative = 0;     // MTP modules (in total only: not in any group above)
    std::int64_t vision = 0;          // vision encoder and projector (in total only: not in any group above)
    std::int64_t block_linear_count = 0;  // number of linear matrices inside the blocks
    // Parameters one token reads in an MoE model (attention, shared, k of E experts); = block_linears when dense.
    std::int64_t active_block_linears = 0;
};

// Counts the parameters of `config` from its inventory.
ParameterCounts count_parameters(const ModelConfig& config);

// The same from an inventory already built by tensor_inventory(config).
ParameterCounts count_parameters(const ModelConfig& config, const std::vector<TensorInfo>& inventory);

// Checks that every size is positive and small enough that products cannot overflow; throws
// Error naming the config field.
void validate_model(const ModelConfig& config);

}  // namespace quantplan
