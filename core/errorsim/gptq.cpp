#include "core/errorsim/gptq.h"

#include <Eigen/Cholesky>
#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/base/error.h"

namespace quantplan::errorsim {

GptqOutcome gptq_quantize(const Grid& grid, const ScaleLayout& layout, const MatrixF& w, const MatrixF& hessian,
                          const std::vector<double>& input_scale, const GptqOptions& options) {
    const std::int64_t n = w.rows(), k = w.cols();
    GptqOutcome out;
    out.dynamic_groups = layout.group_rows == 1 && layout.group_cols < k && !options.act_order;
    const double s2 = second_level_scale(grid, std::max(-static_cast<double>(w.minCoeff()), static_cast<double>(w.maxCoeff())));
    if (out.dynamic_groups) out.params.assign(static_cast<std::size_t>(layout.group_count()), GroupParams{});
    else out.params = fit_matrix(grid, layout, w);

    // Column order: natural, or by descending Hessian diagonal (stable, so ties keep their order).
    std::vector<std::int64_t> perm(static_cast<std::size_t>(k));
    std::iota(perm.begin(), perm.end(), std::int64_t{0});
    const auto inv_s = [&](std::int64_t j) { return input_scale.empty() ? 1.0 : 1.0 / input_scale[static_cast<std::size_t>(j)]; };
    const auto h_scaled = [&](std::int64_t a, std::int64_t b) { return static_cast<double>(hessian(a, b)) * inv_s(a) * inv_s(b); };
    if (options.act_order)
        std::stable_sort(perm.begin(), perm.end(), [&](std::int64_t a, std::int64_t b) { return h_scaled(a, a) > h_scaled(b, b); });

    // Dead inputs (never active in calibration) carry no information: H_jj = 1, weights zeroed.
    std::vector<bool> dead(static_cast<std::size_t>(k), false);
    double diag_sum = 0.0;
    for (std::int64_t j = 0; j < k; ++j) {
        const double d = h_scaled(j, j);
        if (d == 0.0) dead[static_cast<std::size_t>(j)] = true;
        diag_sum += d == 0.0 ? 1.0 : d;
    }
    const double diag_mean = diag_sum / static_cast<double>(k);

    // a = reversed, permuted, dampened H; its lower Cholesky factor reversed is A (upper).
    MatrixF a(k, k);
    double damp = options.dampening;
    bool factored = false;
    for (int attempt = 0; attempt < 5 && !factored; ++attempt, damp *= 10.0) {
        for (std::int64_t c = 0; c < k; ++c) {
            const std::int64_t pc = perm[static_cast<std::size_t>(k - 1 - c)];
            for (std::int64_t r = c; r < k; ++r) {
                const std::int64_t pr = perm[static_cast<std::size_t>(k - 1 - r)];
                double v = h_scaled(pr, pc);
                if (r == c) v = (dead[static_cast<std::size_t>(pr)] ? 1.0 : v) + damp * diag_mean;
                a(r, c) = static_cast<float>(v);
            }
        }
        Eigen::LLT<Eigen::Ref<MatrixF>, Eigen::Lower> llt(a);
        factored = llt.info() == Eigen::Success;
        if (factored) out.dampening_used = damp;
    }
    if (!factored) throw Error("methods.gptq", "the calibration Hessian is not positive definite even with heavy dampening");
    a.reverseInPlace();  // upper A with H_perm = A A^T
    // U = A^-1 is the upper Cholesky factor of H^-1 (H^-1 = A^-T A^-1 = U^T U), the matrix GPTQ's
    // updates read: triangular solves instead of an inverse and a second factorization.
    // A^-1 is upper triangular, so column block [j0, j1) of it only has rows 0..j1-1: solving
    // A[0:j1, 0:j1] X = I[0:j1, j0:j1] per block costs K^3/6 multiply-adds instead of K^3/2.
    MatrixF u = MatrixF::Zero(k, k);
    constexpr std::int64_t kInverseBlock = 256;
    for (std::int64_t j0 = 0; j0 < k; j0 += kInverseBlock) {
        const std::int64_t j1 = std::min(j0 + kInverseBlock, k);
        u.block(j0, j0, j1 - j0, j1 - j0).setIdentity();
        auto x = u.block(0, j0, j1, j1 - j0);
        a.topLeftCorner(j1, j1).triangularView<Eigen::Upper>().solveInPlace(x);
    }
    a.resize(0, 0);

    // cur: the weights as GPTQ updates them (permuted order); err: (w - q) / U_kk per column.
    MatrixF cur(n, k), err(n, k);
    for (std::int64_t c = 0; c < k; ++c) {
        const std::int64_t pc = perm[static_cast<std::size_t>(c)];
        if (dead[static_cast<std::size_t>(pc)]) cur.col(c).setZero();
        else cur.col(c) = w.col(pc);
    }
    out.dequantized.resize(n, k);
    out.ordinals.resize(n, k);
    // Each scale group's row part of its index, so the inner loop does no division.
    std::vector<std::int64_t> row_base(static_cast<std::size_t>(n));
    for (std::int64_t r = 0; r < n; ++r) row_base[static_cast<std::size_t>(r)] = (r / layout.group_rows) * layout.col_groups;
    // Lazy batch updates (GPTQ's blocks): a column's error reaches the rest of its block at once
    // and the columns after the block only when the block is done, as one matrix product. Inside a
    // block the same split runs once more on sub-blocks of kSubBlock columns so that the rank-1
    // updates touch few columns (the same arithmetic, applied in a different order).
    constexpr std::int64_t kSubBlock = 16;
    const std::int64_t block = std::max<std::int64_t>(1, options.block_size);
    MatrixF block_start;
    for (std::int64_t i1 = 0; i1 < k; i1 += block) {
        const std::int64_t i2 = std::min(i1 + block, k);
        // The reference (gptq.py, fasterquant) fits a group's scale from W, which holds the updates
        // of the previous blocks but not those of the current block (they live in its copy W1).
        if (out.dynamic_groups) block_start = cur.middleCols(i1, i2 - i1);
        for (std::int64_t b1 = i1, b2 = i1; b1 < i2; b1 = b2) {
            b2 = std::min(b1 + kSubBlock, i2);
            for (std::int64_t c = b1; c < b2; ++c) {
                const std::int64_t pc = perm[static_cast<std::size_t>(c)];
                const std::int64_t cg = pc / layout.group_cols;
                if (out.dynamic_groups && pc % layout.group_cols == 0) {
                    const std::int64_t width = std::min(layout.group_cols, k - pc);
                    const std::int64_t inside = std::min(width, i2 - c);
                    for (std::int64_t r = 0; r < n; ++r) {
                        double lo = 0.0, hi = 0.0, lo2 = 0.0, hi2 = 0.0;
                        range_of(&block_start(r, c - i1), inside, n, lo, hi);
                        if (width > inside) range_of(&cur(r, i2), width - inside, n, lo2, hi2);
                        out.params[static_cast<std::size_t>(row_base[static_cast<std::size_t>(r)] + cg)] =
                            fit_group(grid, std::min(lo, lo2), std::max(hi, hi2), s2);
                    }
                }
                const double inv_diag = 1.0 / static_cast<double>(u(c, c));
                float* err_col = err.col(c).data();
                const float* cur_col = cur.col(c).data();
                for (std::int64_t r = 0; r < n; ++r) {
                    std::int32_t ord = 0;
                    const double q = quantize_value(grid, out.params[static_cast<std::size_t>(row_base[static_cast<std::size_t>(r)] + cg)], cur_col[r], &ord);
                    out.dequantized(r, pc) = static_cast<float>(q);
                    out.ordinals(r, pc) = ord;
                    err_col[r] = static_cast<float>((static_cast<double>(cur_col[r]) - q) * inv_diag);
                }
                if (c + 1 < b2) cur.middleCols(c + 1, b2 - c - 1).noalias() -= err.col(c) * u.row(c).segment(c + 1, b2 - c - 1);
            }
            if (b2 < i2) cur.middleCols(b2, i2 - b2).noalias() -= err.middleCols(b1, b2 - b1) * u.block(b1, b2, b2 - b1, i2 - b2);
        }
        if (i2 < k) cur.rightCols(k - i2).noalias() -= err.middleCols(i1, i2 - i1) * u.block(i1, i2, i2 - i1, k - i2);
    }
    return out;
}

}  // namespace quantplan::errorsim
