#pragma once
// Transformer architectures as read from a Hugging Face config.json, and the tensor inventory a
// checkpoint of that architecture holds (names as the checkpoint spells them).
#include <cstdint>
#include <string>
#include <vector>

namespace quantplan {

// The architecture fields quantplan needs. Sizes are element counts.
struct ModelConfig {
    std::string name;             // display name (bundled name or the path it came from)
    std::string model_type;       // config.json model_type: llama, mistral, mixtral, qwen2, qwen3, qwen3_moe, qwen2_moe
    std::int64_t hidden_size = 0;
    std::int64_t intermediate_size = 0;      // dense MLP width (0 when every layer is MoE and no dense width is given)
    std::int64_t num_layers = 0;
    std::int64_t num_attention_heads = 0;
    std::int64_t num_kv_heads = 0;           // GQA: key/value heads
    std::int64_t head_dim = 0;               // explicit head_dim or hidden_size / num_attention_heads
    std::int64_t vocab_size = 0;
    bool tie_word_embeddings = false;        // true: no separate lm_head tensor
    bool attention_bias = false;             // q/k/v projections carry a bias (Qwen2)
    bool qk_norm = false;                    // per-head RMSNorm on q and k (Qwen3)
    std::int64_t max_position_embeddings = 0;
    // Mixture of experts (num_experts == 0: dense).
    std::int64_t num_experts = 0;
    std::int64_t experts_per_token = 0;
    std::int64_t moe_intermediate_size = 0;  // width of one routed expert
    std::int64_t shared_expert_intermediate_size = 0;  // Qwen2-MoE style shared expert (0: none)
    std::vector<std::int64_t> dense_layers;  // layers that keep a dense MLP in an MoE model (mlp_only_layers)

    bool is_moe() const { return num_experts > 0; }
    // True when layer `layer` routes its MLP through experts.
    bool layer_is_moe(std::int64_t layer) const;
    // Query projection width: num_attention_heads * head_dim.
    std::int64_t q_dim() const { return num_attention_heads * head_dim; }
    // Key (or value) projection width: num_kv_heads * head_dim.
    std::int64_t kv_dim() const { return num_kv_heads * head_dim; }

    friend bool operator==(const ModelConfig&, const ModelConfig&) = default;
};

// What a tensor is for; decides whether a scheme covers it.
enum class TensorRole : std::uint8_t {
    Embedding,        // input embedding table [vocab, hidden]
    LmHead,           // output projection [vocab, hidden]
    AttentionLinear,  // q/k/v/o projections
    MlpLinear,        // dense MLP projections
    ExpertLinear,     // routed expert projections
    SharedExpertLinear,  // shared expert projections (priced like MLP)
    Router,           // MoE gate [experts, hidden]
    Norm,             // RMSNorm weights
    Bias,             // linear biases
};

// Lower-case name of a role ("attention", "mlp", "experts", ...), used as JSON key.
const char* tensor_role_name(TensorRole role);

// One tensor of a checkpoint.
struct TensorInfo {
    std::string name;                 // e.g. "model.layers.0.self_attn.q_proj.weight"
    std::vector<std::int64_t> shape;  // [rows, cols] for linears: [out N, in K]
    TensorRole role;
    std::int64_t layer = -1;          // decoder layer index, -1 outside the blocks
    std::int64_t count = 1;           // identical tensors this entry stands for (compress_inventory)

    std::int64_t elements() const;
    bool is_linear() const {
        return role == TensorRole::AttentionLinear || role == TensorRole::MlpLinear || role == TensorRole::ExpertLinear ||
               role == TensorRole::SharedExpertLinear || role == TensorRole::LmHead || role == TensorRole::Embedding ||
               role == TensorRole::Router;
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
