#pragma once
// GPTQ (Frantar et al. 2022, arXiv:2210.17323) on a weight matrix (internal to core).
#include <cstdint>
#include <vector>

#include "core/errorsim/quantizer.h"

namespace quantplan::errorsim {

// GPTQ's knobs.
struct GptqOptions {
    double dampening = 0.01;        // fraction of mean diag(H) added to H's diagonal
    std::int64_t block_size = 128;  // columns per lazy-update block
    bool act_order = false;         // quantize columns by descending diag(H)
};

// What GPTQ produced.
struct GptqOutcome {
    MatrixF dequantized;               // N x K quantized weights, original column order
    MatrixI ordinals;                  // N x K code ordinals
    std::vector<GroupParams> params;   // the scale of every group (ScaleLayout::index order)
    double dampening_used = 0.0;       // the dampening fraction that made H positive definite
    bool dynamic_groups = false;       // true: group scales fitted at each group's first column
};

// Quantizes `w` (N x K) column by column, feeding each column's rounding error forward to the
// columns not yet quantized through the Cholesky factor of the dampened Hessian `hessian` (K x K,
// X^T X of the calibration activations). `input_scale` (size K, or empty) says the weights were
// multiplied by s per input channel, so the Hessian of the matching activations X / s is used.
//
// Group handling: 1 x G groups (G < K) without act-order get their scale when GPTQ reaches their
// first column, from the weights with the updates of the previous lazy-update blocks (the
// reference implementation, gptq.py, reads W there, not its in-block copy W1);
// per-tensor, per-channel, 2-D blocks and act-order runs fix every scale up front from `w`
// (act-order with static groups keeps groups contiguous in the original column order).
//
// The algorithm is the paper's (Algorithm 1 with lazy batch updates): U = upper Cholesky factor of
// (H + damp * mean(diag H) * I)^-1, obtained as the inverse of the Cholesky factor of the reversed
// H; for each column q = Q(w_k), e = (w_k - q) / U_kk, w_{k+1:} -= e U_{k,k+1:}. Throws
// Error("methods.gptq") when H stays indefinite after 10^4 times the requested dampening.
GptqOutcome gptq_quantize(const Grid& grid, const ScaleLayout& layout, const MatrixF& w, const MatrixF& hessian,
                          const std::vector<double>& input_scale, const GptqOptions& options);

}  // namespace quantplan::errorsim
