// run_kv_lab: the weight and activation quantizers applied to a KV-cache tensor.
//
// The tensor is K (or V) for T tokens, H heads of D channels, [T, H, D]. Every head has its own
// loud channels (keys carry fixed outlier dimensions, the reason per-channel key quantization
// exists), built like the layer's outlier channels: x = s_t M (0.8 sign + 0.6 z), ordinary
// channels x = s_t a_c z with log-normal a_c and token loudness s_t.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/base/error.h"
#include "core/errorsim/error_lab.h"
#include "core/errorsim/quantizer.h"
#include "core/errorsim/rng.h"

namespace quantplan::errorsim {
namespace {

constexpr double kChannelSpread = 0.3;
constexpr double kTokenSpread = 0.25;
constexpr double kOutlierOffset = 0.8;
constexpr double kOutlierSignal = 0.6;
constexpr std::int64_t kMaxKvElements = std::int64_t{1} << 26;  // 256 MiB of floats

std::string pct(double fraction) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3f%%", 100.0 * fraction);
    return buf;
}

}  // namespace

KvLabResult run_kv_lab(const KvLabConfig& c) {
    if (c.tokens <= 0) throw Error("kv.tokens", "must be positive");
    if (c.heads <= 0) throw Error("kv.heads", "must be positive");
    if (c.head_dim <= 0) throw Error("kv.head_dim", "must be positive");
    if (c.tokens > kMaxKvElements / c.heads / c.head_dim) throw Error("kv.tokens", "the KV tensor may hold at most 2^26 elements");
    if (c.outlier_channels < 0 || c.outlier_channels > c.head_dim) throw Error("kv.outlier_channels", "must be between 0 and head_dim");
    if (!std::isfinite(c.outlier_magnitude) || c.outlier_magnitude <= 0.0 || c.outlier_magnitude > 1e4)
        throw Error("kv.outlier_magnitude", "must be a finite ratio in (0, 10000]");
    const DType scale_format = c.per_token_head ? DType::Fp16 : DType::Fp32;
    const Grid grid = make_grid(c.format, c.symmetric, scale_format, "kv.format");

    // The tensor as a T x (H*D) matrix: a token per row, head h's channels in columns h*D..h*D+D-1,
    // so one token-head is a 1 x D group of a row and the per-tensor scale is one group.
    const std::int64_t d = c.head_dim, cols = c.heads * d;
    Rng rng(c.seed ^ 0x4B56u);
    std::vector<double> scale(static_cast<std::size_t>(cols)), sign(scale.size(), 0.0);
    for (std::int64_t h = 0; h < c.heads; ++h) {
        std::vector<std::int64_t> order(static_cast<std::size_t>(d));
        for (std::int64_t j = 0; j < d; ++j) order[static_cast<std::size_t>(j)] = j;
        for (std::int64_t i = 0; i < c.outlier_channels; ++i)
            std::swap(order[static_cast<std::size_t>(i)], order[static_cast<std::size_t>(i + static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(d - i))))]);
        for (std::int64_t j = 0; j < d; ++j) scale[static_cast<std::size_t>(h * d + j)] = det_exp(kChannelSpread * rng.normal());
        for (std::int64_t i = 0; i < c.outlier_channels; ++i) {
            const std::size_t idx = static_cast<std::size_t>(h * d + order[static_cast<std::size_t>(i)]);
            scale[idx] = c.outlier_magnitude;
            sign[idx] = (rng.next_u64() >> 63) ? 1.0 : -1.0;
        }
    }
    MatrixF x(c.tokens, cols);
    for (std::int64_t t = 0; t < c.tokens; ++t) {
        const double loud = det_exp(kTokenSpread * rng.normal());
        for (std::int64_t j = 0; j < cols; ++j) {
            const std::size_t jj = static_cast<std::size_t>(j);
            const double z = rng.normal();
            const double v = sign[jj] != 0.0 ? scale[jj] * (kOutlierOffset * sign[jj] + kOutlierSignal * z) : scale[jj] * z;
            x(t, j) = static_cast<float>(loud * v);
        }
    }

    const ScaleLayout layout = make_layout(c.per_token_head ? GroupShape::per_group(d) : GroupShape::per_tensor(), c.tokens, cols, "kv");
    MatrixF q;
    MatrixI ordinals;
    quantize_matrix(grid, layout, fit_matrix(grid, layout, x), x, q, &ordinals);
    KvLabResult r;
    const double norm2 = x.cast<double>().squaredNorm();
    r.relative_error = norm2 > 0.0 ? std::sqrt((q - x).cast<double>().squaredNorm() / norm2) : 0.0;
    r.effective_bits = effective_bits(grid, layout);
    if (c.per_token_head && grid.is_integer() && !grid.symmetric)
        r.effective_bits += (16.0 - grid.bits) / static_cast<double>(d);  // the zero point is stored as fp16 (core/scheme/scheme.h)
    std::vector<double> ordinary;
    for (std::int64_t j = 0; j < cols; ++j) {
        if (sign[static_cast<std::size_t>(j)] != 0.0) continue;
        ordinary.push_back(static_cast<double>(ordinals.col(j).maxCoeff()) - ordinals.col(j).minCoeff() + 1.0);
    }
    std::sort(ordinary.begin(), ordinary.end());
    if (!ordinary.empty()) {
        const std::size_t n = ordinary.size();
        r.median_levels_channel = n % 2 ? ordinary[n / 2] : 0.5 * (ordinary[n / 2 - 1] + ordinary[n / 2]);
    }
    char bits[32];
    std::snprintf(bits, sizeof bits, "%.3f", r.effective_bits);
    r.log.push_back(std::string(dtype_name(c.format)) + " KV cache, " +
                    (c.per_token_head ? "one fp16 scale per token and head" : "one static fp32 scale for the tensor") + ": " + bits +
                    " bits per element, relative error " + pct(r.relative_error) + ".");
    char lv[96];
    std::snprintf(lv, sizeof lv, "%.0f of %lld", r.median_levels_channel, static_cast<long long>(grid.code_count()));
    r.log.push_back(std::string("The median ordinary channel spans ") + lv + " levels" +
                    (c.outlier_channels > 0 ? "; each head's " + std::to_string(c.outlier_channels) + " loud channels set the scale it shares." : "."));
    return r;
}

}  // namespace quantplan::errorsim
