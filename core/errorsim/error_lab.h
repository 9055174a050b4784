#pragma once
// The error lab (issue 8): one linear layer quantized for real, as in seed 003's first simulation.
//
// A layer is W [N output channels x K input channels] and activations X [T tokens x K] with a few
// loud outlier input channels; its output is Y = X W^T. The lab quantizes the weights (and, when
// asked, the activations) with a format and a granularity, optionally after AWQ or SmoothQuant
// rescaling and with GPTQ rounding, and reports how far the quantized layer's output lands from
// the original: on the calibration tokens the methods were fitted on (the objective GPTQ and AWQ
// minimise, so the methods "mark their own homework" there) and on held-out tokens.
//
// Everything here is deterministic: the layer comes from the lab's own RNG, so the same LayerSpec
// gives the same layer on every platform. Nothing here does I/O except read_safetensors_tensor.
// Relative errors are fractions (0.1276 = 12.76%). See docs/errorsim.md.
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/base/dtype.h"
#include "core/scheme/scheme.h"

namespace quantplan::errorsim {

// The synthetic layer: its shape, how many tokens calibrate and how many are held out, and the
// outlier input channels. Defaults reproduce seed 003's layer (32 x 256, three 20x outliers).
struct LayerSpec {
    std::int64_t out_features = 32;         // N: output channels (rows of W)
    std::int64_t in_features = 256;         // K: input channels (columns of W, channels of X)
    std::int64_t calibration_tokens = 512;  // T_cal: tokens the methods are fitted on
    std::int64_t heldout_tokens = 512;      // T_held: tokens no method sees
    std::int64_t outlier_channels = 3;      // input channels whose activations are loud
    double outlier_magnitude = 20.0;        // RMS of an outlier channel / RMS of an ordinary one
    std::uint64_t seed = 1;                 // the lab's RNG seed
    bool correlated_activations = true;     // false: independent channels (no shared spectrum)
    double spectrum_decay = 1.0;            // activation covariance singular values fall as r^-decay
    double output_channel_spread = 0.5;     // log-normal sigma of per-output-channel weight scale
    double input_channel_spread = 0.25;     // log-normal sigma of per-input-channel weight scale

    friend bool operator==(const LayerSpec&, const LayerSpec&) = default;
};

// How the weights are quantized. `format` is the payload: int2..int8, fp8_e4m3, fp8_e5m2 or
// fp4_e2m1. `scale_format` is the storage of the first-level scale (nullopt: the format's default,
// fp16 for integers, fp32 per tensor / bf16 otherwise for fp8, e4m3 for fp4). fp4_e2m1 with an
// e4m3 scale per 16 plus an fp32 scale per tensor is NVFP4; with an e8m0 scale per 32 it is MXFP4;
// with an fp32 scale it is plain fp4 at any granularity. `symmetric` false adds a zero point per
// group (integers only: float formats carry none).
struct WeightQuantSpec {
    DType format = DType::Int4;
    GroupShape group = GroupShape::per_group(128);
    bool symmetric = false;
    std::optional<DType> scale_format;

    // NVFP4: fp4 e2m1, one e4m3 scale per 16 elements, one fp32 scale per tensor.
    static WeightQuantSpec nvfp4();
    // MXFP4: fp4 e2m1, one e8m0 (power of two) scale per 32 elements.
    static WeightQuantSpec mxfp4();

    friend bool operator==(const WeightQuantSpec&, const WeightQuantSpec&) = default;
};

// How the activations are quantized. `format` nullopt keeps them 16-bit (the weight-only case).
// Dynamic scales are computed on every batch, per token or per tensor; static scales are one
// per-tensor scale calibrated on the calibration tokens and applied unchanged to held-out tokens
// (so static with per_token is refused).
struct ActivationQuantSpec {
    std::optional<DType> format;  // int8 (or int2..int8), fp8_e4m3, fp8_e5m2; nullopt = 16-bit
    bool per_token = true;        // one scale per token (dynamic only) or one per tensor
    bool is_static = false;       // scale from calibration data instead of each batch
    bool symmetric = true;        // false: a zero point (integers only)

    friend bool operator==(const ActivationQuantSpec&, const ActivationQuantSpec&) = default;
};

// Which methods run before or during weight rounding. AWQ and SmoothQuant both rescale input
// channels (they are the same transformation with different objectives) and exclude each other;
// GPTQ composes with either because it changes the rounding, not the scales.
struct MethodToggles {
    bool gptq = false;                 // Hessian-aware rounding (Frantar et al. 2022)
    bool awq = false;                  // activation-aware per-input-channel scales (Lin et al. 2023)
    bool smoothquant = false;          // s_j = max|x_j|^a / max|w_j|^(1-a) (Xiao et al. 2022)
    double smoothquant_alpha = 0.5;    // migration strength a in [0, 1]
    bool act_order = false;            // GPTQ: quantize columns by descending Hessian diagonal
    double gptq_dampening = 0.01;      // GPTQ: fraction of mean diag(H) added to the diagonal
    std::int64_t gptq_block_size = 128;  // GPTQ: columns per lazy-update block
    bool awq_clip_search = false;      // AWQ: also search a per-group clipping ratio
    std::int64_t awq_grid_points = 20;   // AWQ: exponents tried, 0, 1/n, ..., (n-1)/n

    friend bool operator==(const MethodToggles&, const MethodToggles&) = default;
};

// One run of the lab.
struct ErrorLabConfig {
    LayerSpec layer;
    WeightQuantSpec weights;
    ActivationQuantSpec activations;
    MethodToggles methods;

    friend bool operator==(const ErrorLabConfig&, const ErrorLabConfig&) = default;
};

// What one run measured. Errors are relative Frobenius norms as fractions.
struct ErrorLabResult {
    double layer_error_calibration = 0.0;  // ||Yq - Y|| / ||Y|| on the calibration tokens
    double layer_error_heldout = 0.0;      // the same on the held-out tokens
    double weight_error = 0.0;             // ||Wq - W|| / ||W||, any rescaling folded back
    double effective_bits = 0.0;           // payload + scale + zero-point bits per weight
    double median_levels_per_group = 0.0;  // median grid levels one output row spans in a scale group
    double median_levels_activation_channel = 0.0;  // median levels an ordinary input channel spans; 0 for 16-bit activations
    double weight_spread_before = 0.0;     // max/min over input channels of max|W[:, j]|, original
    double weight_spread_after = 0.0;      // the same after AWQ/SmoothQuant rescaling (= before without)
    std::optional<double> awq_alpha;       // the AWQ exponent the search chose, when AWQ ran
    std::vector<std::string> log;          // the decision log: each number above in words
};

// A weight tensor read from a checkpoint, widened to fp32: rows x cols, row-major.
struct RealWeights {
    std::string name;            // tensor name in the file
    DType stored = DType::Bf16;  // bf16, fp16 or fp32 as stored
    std::int64_t rows = 0;       // output channels
    std::int64_t cols = 0;       // input channels
    std::vector<float> values;   // rows * cols values, row-major
};

// The data one LayerSpec (or one real tensor) generates, with what every run reuses: reference
// outputs and the calibration Hessian. Cheap to copy (shared, immutable). Build it once and pass it
// to the overloads below while only quantization settings change (a GUI slider).
struct LayerData;
class Layer {
public:
    Layer() = default;
    explicit Layer(std::shared_ptr<const LayerData> data) : data_(std::move(data)) {}
    const LayerData& data() const { return *data_; }
    bool empty() const { return !data_; }
    // The spec the activations (and, for synthetic layers, the weights) came from.
    const LayerSpec& spec() const;
    // The real tensor's name, or empty for a synthetic layer.
    const std::string& tensor_name() const;

private:
    std::shared_ptr<const LayerData> data_;
};

// A one-entry cache of generated layers, owned by a caller that reruns the lab as settings change
// (the GUI's sliders): get() regenerates only when the spec differs from the previous call's.
// Thread-safe; generation happens outside the lock's critical path only once per spec change.
class LayerCache {
public:
    // The layer of `spec`, generated now or reused. Throws like generate_layer.
    Layer get(const LayerSpec& spec);

private:
    std::mutex mutex_;
    std::optional<LayerSpec> spec_;
    Layer layer_;
};

// Generates the synthetic layer of `spec`. Throws Error naming the field for a non-positive size,
// more outlier channels than input channels, a non-finite or non-positive magnitude, or a layer
// above the lab's size limit.
Layer generate_layer(const LayerSpec& spec);

// A layer whose weights are `weights` (N x K from a checkpoint). Its activations are synthetic, from
// `spec` with its sizes replaced by the tensor's, or `activations` (T x K, supplied) when given:
// their first half calibrates, the second half is held out, and channels whose RMS exceeds 6x the
// median channel's count as outliers. Throws Error like generate_layer, or naming the tensor when
// shapes disagree or a value is not finite.
Layer layer_from_weights(const RealWeights& weights, const LayerSpec& spec, const RealWeights* activations = nullptr);

// Runs the lab once. Throws Error naming the field for a bad configuration (a non-positive group
// size, an asymmetric float format, AWQ together with SmoothQuant, static per-token activations...).
ErrorLabResult run_error_lab(const ErrorLabConfig& config);

// Runs the lab on an already generated layer; `config.layer` is ignored.
ErrorLabResult run_error_lab(const ErrorLabConfig& config, const Layer& layer);

// One row of the granularity ladder.
struct LadderRow {
    std::string granularity;  // "per-tensor", "per-channel", "g128", "g64", "g32"
    GroupShape group;
    ErrorLabResult result;
};

// Seed 003's ladder: `base` at per-tensor, per-channel, g128, g64 and g32 (layer generated once).
std::vector<LadderRow> granularity_ladder(const ErrorLabConfig& base);

// The same ladder on an already generated layer.
std::vector<LadderRow> granularity_ladder(const ErrorLabConfig& base, const Layer& layer);

// The KV-cache tensor: K (or V) for `tokens` tokens, `heads` heads of `head_dim`, with loud
// channels inside each head, quantized per tensor (one static scale) or per token and head.
struct KvLabConfig {
    std::int64_t tokens = 512;
    std::int64_t heads = 8;
    std::int64_t head_dim = 128;
    std::int64_t outlier_channels = 3;  // loud channels per head
    double outlier_magnitude = 20.0;
    std::uint64_t seed = 1;
    DType format = DType::Fp8E4M3;      // int2..int8, fp8_e4m3, fp8_e5m2, fp4_e2m1
    bool per_token_head = false;        // false: one per-tensor scale
    bool symmetric = true;              // false: a zero point (integers only)
};

// What the KV-cache quantization measured.
struct KvLabResult {
    double relative_error = 0.0;          // ||Kq - K|| / ||K||
    double effective_bits = 0.0;          // payload + scale (+ zero point) bits per element
    double median_levels_channel = 0.0;   // median levels an ordinary channel spans
    std::vector<std::string> log;
};

// Quantizes a synthetic KV-cache tensor. Throws Error naming the field for bad sizes or formats.
KvLabResult run_kv_lab(const KvLabConfig& config);

// Canonical names of a weight quantizer ("int4", "fp8_e4m3", "nvfp4", "mxfp4", "fp4_e2m1") and of
// a granularity ("per-tensor", "per-channel", "g128", "block128x128").
std::string weight_format_name(const WeightQuantSpec& spec);
std::string granularity_name(const GroupShape& group);

// Reads one tensor by name from a .safetensors file, reading only the header and that tensor's
// bytes. Accepts bf16, fp16 and fp32 2-D tensors (a 1-D tensor is one row). Throws Error naming
// the file or tensor for a missing file, a malformed header, an unknown name, another dtype, or a
// tensor above `max_elements`.
RealWeights read_safetensors_tensor(const std::string& path, const std::string& tensor_name,
                                    std::int64_t max_elements = std::int64_t{1} << 26);

}  // namespace quantplan::errorsim
