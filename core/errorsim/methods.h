#pragma once
// AWQ and SmoothQuant: the two per-input-channel rescalings (internal to core). Both multiply
// weight column j by s_j and divide activation channel j by s_j, which leaves X W^T unchanged.
#include <vector>

#include "core/errorsim/layer_data.h"

namespace quantplan::errorsim {

// tr(D H D^T): the squared output error on the calibration tokens of a weight perturbation D
// (N x K) when H = X^T X (K x K).
double hessian_error2(const MatrixF& d, const MatrixF& h);

// What AWQ's search chose.
struct AwqOutcome {
    std::vector<double> scale;   // K: s_j = mean|x_j|^alpha, normalised so sqrt(max s * min s) = 1
    double alpha = 0.0;          // the exponent with the smallest calibration output error
    std::vector<double> clip;    // per scale group (ScaleLayout::index order): range ratio, or empty
    double loss_rtn = 0.0;       // calibration tr(D H D^T) at alpha = 0 (plain round to nearest)
    double loss_best = 0.0;      // the same at the chosen alpha (and clip)
};

// AWQ (Lin et al. 2023, arXiv:2306.00978): tries alpha = 0, 1/n, ..., (n-1)/n for
// s = mean|x|^alpha, quantizes W s to nearest on `grid`/`layout`, and keeps the alpha whose
// weights give the smallest output error on the calibration tokens (16-bit activations: AWQ is a
// weight-only method). With `clip_search`, then tries range ratios 1, 0.95, ..., 0.55 per scale
// group and keeps the best per group, as AutoAWQ's auto_clip does.
AwqOutcome awq_search(const LayerData& layer, const Grid& grid, const ScaleLayout& layout, std::int64_t grid_points, bool clip_search);

// SmoothQuant (Xiao et al. 2022, arXiv:2211.10438): s_j = max|x_j|^alpha / max_i|w_ij|^(1-alpha)
// over the calibration tokens; 1 where either maximum is 0.
std::vector<double> smoothquant_scales(const LayerData& layer, double alpha);

// W with column j multiplied by scale[j].
MatrixF scale_columns(const MatrixF& w, const std::vector<double>& scale);

// max_j m_j / min_j m_j with m_j = max_i |w_ij| (columns that are all zero skipped).
double input_channel_spread(const MatrixF& w);

}  // namespace quantplan::errorsim
