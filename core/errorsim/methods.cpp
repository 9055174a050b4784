#include "core/errorsim/methods.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/errorsim/rng.h"

namespace quantplan::errorsim {
namespace {

// AutoAWQ clamps mean |x| from below before taking the power (1e-4), so that silent channels do
// not get a zero scale.
constexpr double kAwqMinStatistic = 1e-4;
// AutoAWQ's auto_clip: n_grid 20, max_shrink 0.5, i.e. ratios 1 - i/20 for i = 0..9.
constexpr int kClipGrid = 20;
constexpr int kClipSteps = 10;

}  // namespace

double hessian_error2(const MatrixF& d, const MatrixF& h) {
    const MatrixF dh = d * h;
    return dh.cwiseProduct(d).cast<double>().sum();
}

MatrixF scale_columns(const MatrixF& w, const std::vector<double>& scale) {
    MatrixF out = w;
    for (Eigen::Index j = 0; j < w.cols(); ++j) out.col(j) *= static_cast<float>(scale[static_cast<std::size_t>(j)]);
    return out;
}

double input_channel_spread(const MatrixF& w) {
    double lo = std::numeric_limits<double>::infinity(), hi = 0.0;
    for (Eigen::Index j = 0; j < w.cols(); ++j) {
        const double m = w.col(j).cwiseAbs().maxCoeff();
        if (m == 0.0) continue;
        lo = std::min(lo, m);
        hi = std::max(hi, m);
    }
    return hi > 0.0 ? hi / lo : 1.0;
}

AwqOutcome awq_search(const LayerData& layer, const Grid& grid, const ScaleLayout& layout, std::int64_t grid_points, bool clip_search) {
    const std::int64_t k = layer.w.cols();
    AwqOutcome best;
    best.loss_best = std::numeric_limits<double>::infinity();
    std::vector<double> log_stat(static_cast<std::size_t>(k));
    for (std::int64_t j = 0; j < k; ++j) log_stat[static_cast<std::size_t>(j)] = det_log(std::max(layer.mean_abs_x[static_cast<std::size_t>(j)], kAwqMinStatistic));
    MatrixF q;
    for (std::int64_t g = 0; g < grid_points; ++g) {
        const double alpha = static_cast<double>(g) / static_cast<double>(grid_points);
        std::vector<double> s(static_cast<std::size_t>(k));
        double lo = std::numeric_limits<double>::infinity(), hi = -lo;
        for (std::int64_t j = 0; j < k; ++j) {
            const double v = alpha * log_stat[static_cast<std::size_t>(j)];
            lo = std::min(lo, v);
            hi = std::max(hi, v);
        }
        const double centre = 0.5 * (lo + hi);  // s / sqrt(max s * min s), in logs
        for (std::int64_t j = 0; j < k; ++j) s[static_cast<std::size_t>(j)] = det_exp(alpha * log_stat[static_cast<std::size_t>(j)] - centre);
        const MatrixF ws = scale_columns(layer.w, s);
        quantize_matrix(grid, layout, fit_matrix(grid, layout, ws), ws, q, nullptr);
        MatrixF d = q;
        for (std::int64_t j = 0; j < k; ++j) d.col(j) *= static_cast<float>(1.0 / s[static_cast<std::size_t>(j)]);
        d -= layer.w;
        const double loss = hessian_error2(d, layer.hessian);
        if (g == 0) best.loss_rtn = loss;
        if (loss < best.loss_best) {
            best.loss_best = loss;
            best.alpha = alpha;
            best.scale = std::move(s);
        }
    }
    if (!clip_search) return best;

    // Per scale group, the range ratio with the smallest error of that group's share of the
    // output, measured in the scaled space with H_s = S^-1 H S^-1.
    const MatrixF ws = scale_columns(layer.w, best.scale);
    const double s2 = second_level_scale(grid, std::max(-static_cast<double>(ws.minCoeff()), static_cast<double>(ws.maxCoeff())));
    best.clip.assign(static_cast<std::size_t>(layout.group_count()), 1.0);
    for (std::int64_t cg = 0; cg < layout.col_groups; ++cg) {
        const std::int64_t c0 = cg * layout.group_cols, width = std::min(layout.group_cols, k - c0);
        MatrixF hs = layer.hessian.block(c0, c0, width, width);
        for (std::int64_t a = 0; a < width; ++a)
            for (std::int64_t b = 0; b < width; ++b)
                hs(a, b) = static_cast<float>(hs(a, b) / (best.scale[static_cast<std::size_t>(c0 + a)] * best.scale[static_cast<std::size_t>(c0 + b)]));
        for (std::int64_t rg = 0; rg < layout.row_groups; ++rg) {
            const std::int64_t r0 = rg * layout.group_rows, height = std::min(layout.group_rows, layout.rows - r0);
            const MatrixF block = ws.block(r0, c0, height, width);
            double lo = 0.0, hi = 0.0;
            range_of(block.data(), block.size(), 1, lo, hi);
            double best_loss = std::numeric_limits<double>::infinity();
            double best_ratio = 1.0;
            for (int i = 0; i < kClipSteps; ++i) {
                const double ratio = 1.0 - static_cast<double>(i) / kClipGrid;
                const GroupParams p = fit_group(grid, lo, hi, s2, ratio);
                MatrixF d(height, width);
                for (std::int64_t c = 0; c < width; ++c)
                    for (std::int64_t r = 0; r < height; ++r) d(r, c) = static_cast<float>(quantize_value(grid, p, block(r, c), nullptr) - block(r, c));
                const double loss = hessian_error2(d, hs);
                if (loss < best_loss) {
                    best_loss = loss;
                    best_ratio = ratio;
                }
            }
            best.clip[static_cast<std::size_t>(rg * layout.col_groups + cg)] = best_ratio;
        }
    }
    return best;
}

std::vector<double> smoothquant_scales(const LayerData& layer, double alpha) {
    const std::int64_t k = layer.w.cols();
    std::vector<double> s(static_cast<std::size_t>(k), 1.0);
    for (std::int64_t j = 0; j < k; ++j) {
        const double xm = layer.max_abs_x[static_cast<std::size_t>(j)];
        const double wm = layer.w.col(j).cwiseAbs().maxCoeff();
        if (xm > 0.0 && wm > 0.0) s[static_cast<std::size_t>(j)] = det_exp(alpha * det_log(xm) - (1.0 - alpha) * det_log(wm));
    }
    return s;
}

}  // namespace quantplan::errorsim
