#pragma once
// What a generated (or loaded) layer holds, shared by every run on it (internal to core).
#include <cstdint>
#include <string>
#include <vector>

#include "core/errorsim/error_lab.h"
#include "core/errorsim/quantizer.h"

namespace quantplan::errorsim {

// The immutable data of one layer: weights, calibration and held-out activations, their reference
// outputs, the calibration Hessian and the per-channel activation statistics the methods read.
struct LayerData {
    LayerSpec spec;                          // sizes match the matrices below
    std::string tensor_name;                 // empty for a synthetic layer
    MatrixF w;                               // N x K weights
    MatrixF x_calibration;                   // T_cal x K activations the methods see
    MatrixF x_heldout;                       // T_held x K activations they do not
    MatrixF y_calibration;                   // T_cal x N reference outputs, x_calibration w^T
    MatrixF y_heldout;                       // T_held x N reference outputs
    MatrixF hessian;                         // K x K, x_calibration^T x_calibration (GPTQ's H/2)
    std::vector<std::int64_t> outlier_channels;  // indices of the loud input channels, ascending
    std::vector<bool> is_outlier;            // K flags
    std::vector<double> mean_abs_x;          // K: mean |x_j| over calibration tokens (AWQ)
    std::vector<double> max_abs_x;           // K: max |x_j| over calibration tokens (SmoothQuant)
    // Synthetic layers only: each token's loudness s_t and, per outlier channel, the unit signal
    // (0.8 sign + 0.6 x0) of every token (calibration then held-out, token-major), so that a new
    // outlier magnitude rebuilds exactly the columns generation would have made.
    std::vector<double> token_loudness;
    std::vector<double> outlier_unit;
    double w_norm2 = 0.0;                    // ||W||_F^2
    double y_calibration_norm2 = 0.0;        // ||Y_cal||_F^2
    double y_heldout_norm2 = 0.0;            // ||Y_held||_F^2
};

// The largest layer the lab builds: N*K and T*K elements at most kMaxElements, K at most
// kMaxInFeatures (the Hessian is K x K floats: 256 MiB at 8192).
inline constexpr std::int64_t kMaxElements = std::int64_t{1} << 26;
inline constexpr std::int64_t kMaxInFeatures = 8192;

// Throws Error naming the field when `spec` is out of range (sizes, outliers, magnitude, spreads).
void validate_layer_spec(const LayerSpec& spec);

// Generates the synthetic activations for `spec` (calibration then held-out tokens) and the
// outlier channel set, filling x_calibration, x_heldout, outlier_channels and is_outlier.
void generate_activations(const LayerSpec& spec, LayerData& data);

// Computes the reference outputs, the Hessian and the statistics from w and the activations.
void finish_layer(LayerData& data);

// `layer` with its outlier channels at `magnitude` instead, bit-identical to generating the layer
// with that magnitude but without drawing any random number. Precondition: a synthetic layer.
Layer with_outlier_magnitude(const Layer& layer, double magnitude);

}  // namespace quantplan::errorsim
