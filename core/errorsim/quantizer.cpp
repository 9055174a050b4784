#include "core/errorsim/quantizer.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

#include "core/base/error.h"

namespace quantplan::errorsim {
namespace {

// NVFP4's recipe divides the tensor range between the fp4 element max (6) and the e4m3 scale
// max (448): s2 = amax / (6 * 448), so every e4m3 block scale fits its format.
constexpr double kE4m3Max = 448.0;

double round_scale(const Grid& g, double v, double second_level, double amax) {
    switch (g.scale_format) {
        case DType::Fp32: return static_cast<double>(static_cast<float>(v));
        case DType::Fp16: return round_to_minifloat(v, *minifloat_format(DType::Fp16));
        case DType::Bf16: return round_to_minifloat(v, *minifloat_format(DType::Bf16));
        case DType::Fp8E4M3:
            return round_to_minifloat(v / second_level, *minifloat_format(DType::Fp8E4M3)) * second_level;
        case DType::Fp8E8M0: return decode_e8m0(mx_scale_code(amax, minifloat_emax(*g.fp)));
        default: assert(false); return v;
    }
}

}  // namespace

std::vector<std::int64_t> row_group_bases(const ScaleLayout& l) {
    std::vector<std::int64_t> base(static_cast<std::size_t>(l.rows));
    for (std::int64_t r = 0; r < l.rows; ++r) base[static_cast<std::size_t>(r)] = (r / l.group_rows) * l.col_groups;
    return base;
}

double Grid::payload_max() const { return fp ? fp->max_finite : static_cast<double>(symmetric ? qmax : qmax - qmin); }

DType default_weight_scale_format(DType payload, const GroupShape& group) {
    if (payload == DType::Fp4E2M1) return DType::Fp8E4M3;
    if (payload == DType::Fp8E4M3 || payload == DType::Fp8E5M2) return group.is_per_tensor() ? DType::Fp32 : DType::Bf16;
    return DType::Fp16;
}

Grid make_grid(DType payload, bool symmetric, DType scale_format, const std::string& field) {
    Grid g;
    g.payload = payload;
    g.symmetric = symmetric;
    g.scale_format = scale_format;
    if (dtype_is_integer(payload)) {
        g.bits = dtype_bits(payload);
        if (g.bits < 2 || g.bits > 8)
            throw Error(field, "integer payloads are int2 to int8, got " + std::string(dtype_name(payload)));
        if (symmetric) {
            g.qmax = (std::int64_t{1} << (g.bits - 1)) - 1;
            g.qmin = -g.qmax;
        } else {
            g.qmin = 0;
            g.qmax = (std::int64_t{1} << g.bits) - 1;
        }
    } else {
        g.fp = minifloat_format(payload);
        if (!g.fp || payload == DType::Fp16 || payload == DType::Bf16)
            throw Error(field, "unsupported payload format '" + std::string(dtype_name(payload)) + "' (int2..int8, fp8_e4m3, fp8_e5m2, fp4_e2m1)");
        if (!symmetric)
            throw Error(field, std::string(dtype_name(payload)) + " is a float format: it carries no zero point, so it cannot be asymmetric");
        g.bits = g.fp->bits();
        g.qmin = -((std::int64_t{1} << (g.bits - 1)) - 1);
        g.qmax = -g.qmin;
    }
    switch (scale_format) {
        case DType::Fp32:
        case DType::Fp16:
        case DType::Bf16:
        case DType::Fp8E4M3: break;
        case DType::Fp8E8M0:
            if (g.is_integer()) throw Error(field, "e8m0 (MX) scales are modelled for float payloads only");
            break;
        default:
            throw Error(field, "scale format must be fp32, fp16, bf16, fp8_e4m3 or fp8_e8m0, got '" + std::string(dtype_name(scale_format)) + "'");
    }
    return g;
}

ScaleLayout make_layout(const GroupShape& group, std::int64_t rows, std::int64_t cols, const std::string& field) {
    if (group.rows == 0 || group.cols == 0 || group.rows < -1 || group.cols < -1)
        throw Error(field, "group size must be positive (or -1 for the whole extent), got " + std::to_string(group.rows) + " x " +
                               std::to_string(group.cols));
    ScaleLayout l;
    l.rows = rows;
    l.cols = cols;
    l.group_rows = group.rows < 0 ? rows : std::min(group.rows, rows);
    l.group_cols = group.cols < 0 ? cols : std::min(group.cols, cols);
    l.row_groups = (rows + l.group_rows - 1) / l.group_rows;
    l.col_groups = (cols + l.group_cols - 1) / l.group_cols;
    return l;
}

double second_level_scale(const Grid& g, double tensor_amax) {
    if (!g.two_level()) return 1.0;
    const double s2 = static_cast<double>(static_cast<float>(tensor_amax / (g.payload_max() * kE4m3Max)));
    return s2 > 0.0 ? s2 : 1.0;
}

GroupParams fit_group(const Grid& g, double lo, double hi, double second_level, double clip) {
    assert(lo <= hi && clip > 0.0 && clip <= 1.0);
    lo = std::min(lo, 0.0) * clip;
    hi = std::max(hi, 0.0) * clip;
    GroupParams p;
    if (g.is_integer() && !g.symmetric) {
        const double range = hi - lo;
        p.scale = round_scale(g, range / static_cast<double>(g.qmax), second_level, range);
        p.zero = p.scale > 0.0 ? std::clamp(std::nearbyint(-lo / p.scale), 0.0, static_cast<double>(g.qmax)) : 0.0;
    } else {
        const double amax = std::max(-lo, hi);
        p.scale = round_scale(g, amax / g.payload_max(), second_level, amax);
    }
    return p;
}

void range_of(const float* begin, std::int64_t count, std::int64_t stride, double& lo, double& hi) {
    float mn = 0.0f, mx = 0.0f;
    for (std::int64_t i = 0; i < count; ++i) {
        const float v = begin[i * stride];
        mn = std::min(mn, v);
        mx = std::max(mx, v);
    }
    lo = mn;
    hi = mx;
}

std::vector<GroupParams> fit_matrix(const Grid& g, const ScaleLayout& l, const MatrixF& w, const std::vector<double>* clip) {
    assert(w.rows() == l.rows && w.cols() == l.cols);
    std::vector<float> lo(static_cast<std::size_t>(l.group_count()), 0.0f);
    std::vector<float> hi(lo.size(), 0.0f);
    const std::vector<std::int64_t> row_base = row_group_bases(l);
    for (std::int64_t c = 0; c < l.cols; ++c) {
        const float* col = w.data() + c * l.rows;
        const std::int64_t cg = c / l.group_cols;
        for (std::int64_t r = 0; r < l.rows; ++r) {
            const std::size_t gi = static_cast<std::size_t>(row_base[static_cast<std::size_t>(r)] + cg);
            lo[gi] = std::min(lo[gi], col[r]);
            hi[gi] = std::max(hi[gi], col[r]);
        }
    }
    const double s2 = second_level_scale(g, std::max(-static_cast<double>(w.minCoeff()), static_cast<double>(w.maxCoeff())));
    std::vector<GroupParams> params(lo.size());
    for (std::size_t i = 0; i < params.size(); ++i)
        params[i] = fit_group(g, lo[i], hi[i], s2, clip ? (*clip)[i] : 1.0);
    return params;
}

void quantize_matrix(const Grid& g, const ScaleLayout& l, const std::vector<GroupParams>& params, const MatrixF& w, MatrixF& out,
                     MatrixI* ordinals) {
    out.resize(w.rows(), w.cols());
    if (ordinals) ordinals->resize(w.rows(), w.cols());
    const std::vector<std::int64_t> row_base = row_group_bases(l);
    for (std::int64_t c = 0; c < l.cols; ++c) {
        const std::int64_t cg = c / l.group_cols;
        const float* in = w.data() + c * l.rows;
        float* q = out.data() + c * l.rows;
        std::int32_t* ord = ordinals ? ordinals->data() + c * l.rows : nullptr;
        for (std::int64_t r = 0; r < l.rows; ++r)
            q[r] = static_cast<float>(quantize_value(g, params[static_cast<std::size_t>(row_base[static_cast<std::size_t>(r)] + cg)], in[r], ord ? ord + r : nullptr));
    }
}

double median_levels_per_row_group(const ScaleLayout& l, const MatrixI& ord) {
    const std::size_t slices = static_cast<std::size_t>(l.rows * l.col_groups);
    std::vector<std::int32_t> lo(slices, std::numeric_limits<std::int32_t>::max());
    std::vector<std::int32_t> hi(slices, std::numeric_limits<std::int32_t>::min());
    for (std::int64_t c = 0; c < l.cols; ++c)
        for (std::int64_t r = 0; r < l.rows; ++r) {
            const std::size_t s = static_cast<std::size_t>(r * l.col_groups + c / l.group_cols);
            lo[s] = std::min(lo[s], ord(r, c));
            hi[s] = std::max(hi[s], ord(r, c));
        }
    std::vector<double> levels(slices);
    for (std::size_t s = 0; s < slices; ++s) levels[s] = static_cast<double>(hi[s]) - lo[s] + 1.0;
    std::sort(levels.begin(), levels.end());
    const std::size_t n = levels.size();
    return n % 2 ? levels[n / 2] : 0.5 * (levels[n / 2 - 1] + levels[n / 2]);
}

double effective_bits(const Grid& g, const ScaleLayout& l) {
    const double elements = static_cast<double>(l.rows) * static_cast<double>(l.cols);
    const double groups = static_cast<double>(l.group_count());
    double bits = g.bits + groups * dtype_bits(g.scale_format) / elements;
    if (g.is_integer() && !g.symmetric) bits += groups * g.bits / elements;
    if (g.two_level()) bits += 32.0 / elements;
    return bits;
}

GroupParams calibrate_activation_params(const Grid& g, const MatrixF& x) {
    const double lo = std::min(0.0f, x.minCoeff());
    const double hi = std::max(0.0f, x.maxCoeff());
    return fit_group(g, lo, hi, second_level_scale(g, std::max(-lo, hi)));
}

void quantize_activations(const Grid& g, const MatrixF& x, bool per_token, const std::optional<GroupParams>& fixed, MatrixF& out,
                          std::vector<std::int64_t>* channel_levels) {
    const std::int64_t t_count = x.rows(), k_count = x.cols();
    out.resize(t_count, k_count);
    std::vector<GroupParams> params;
    if (fixed) {
        params.assign(1, *fixed);
    } else if (per_token) {
        std::vector<float> lo(static_cast<std::size_t>(t_count), 0.0f), hi(static_cast<std::size_t>(t_count), 0.0f);
        for (std::int64_t k = 0; k < k_count; ++k)
            for (std::int64_t t = 0; t < t_count; ++t) {
                lo[static_cast<std::size_t>(t)] = std::min(lo[static_cast<std::size_t>(t)], x(t, k));
                hi[static_cast<std::size_t>(t)] = std::max(hi[static_cast<std::size_t>(t)], x(t, k));
            }
        params.resize(static_cast<std::size_t>(t_count));
        for (std::size_t t = 0; t < params.size(); ++t)
            params[t] = fit_group(g, lo[t], hi[t], second_level_scale(g, std::max(-static_cast<double>(lo[t]), static_cast<double>(hi[t]))));
    } else {
        params.assign(1, calibrate_activation_params(g, x));
    }
    if (channel_levels) channel_levels->assign(static_cast<std::size_t>(k_count), 0);
    const bool zero_scale = std::any_of(params.begin(), params.end(), [](const GroupParams& p) { return !(p.scale > 0.0); });
    if (g.is_integer() && !zero_scale) {
        // The integer grid as straight-line arithmetic over a column, which the compiler
        // vectorizes: the same operations as quantize_value, in the same order.
        std::vector<double> scale(static_cast<std::size_t>(t_count)), zero(static_cast<std::size_t>(t_count));
        for (std::int64_t t = 0; t < t_count; ++t) {
            const GroupParams& p = params.size() == 1 ? params[0] : params[static_cast<std::size_t>(t)];
            scale[static_cast<std::size_t>(t)] = p.scale;
            zero[static_cast<std::size_t>(t)] = p.zero;
        }
        const double qmin = static_cast<double>(g.qmin), qmax = static_cast<double>(g.qmax);
        for (std::int64_t k = 0; k < k_count; ++k) {
            const float* in = x.data() + k * t_count;
            float* o = out.data() + k * t_count;
            std::int32_t lo = std::numeric_limits<std::int32_t>::max(), hi = std::numeric_limits<std::int32_t>::min();
            for (std::int64_t t = 0; t < t_count; ++t) {
                double q = std::nearbyint(static_cast<double>(in[t]) / scale[static_cast<std::size_t>(t)]) + zero[static_cast<std::size_t>(t)];
                q = q < qmin ? qmin : q;
                q = q > qmax ? qmax : q;
                o[t] = static_cast<float>((q - zero[static_cast<std::size_t>(t)]) * scale[static_cast<std::size_t>(t)]);
                const std::int32_t ord = static_cast<std::int32_t>(q);
                lo = std::min(lo, ord);
                hi = std::max(hi, ord);
            }
            if (channel_levels && t_count > 0) (*channel_levels)[static_cast<std::size_t>(k)] = static_cast<std::int64_t>(hi) - lo + 1;
        }
        return;
    }
    for (std::int64_t k = 0; k < k_count; ++k) {
        std::int32_t lo = std::numeric_limits<std::int32_t>::max(), hi = std::numeric_limits<std::int32_t>::min();
        for (std::int64_t t = 0; t < t_count; ++t) {
            std::int32_t ord = 0;
            const GroupParams& p = params.size() == 1 ? params[0] : params[static_cast<std::size_t>(t)];
            out(t, k) = static_cast<float>(quantize_value(g, p, x(t, k), &ord));
            lo = std::min(lo, ord);
            hi = std::max(hi, ord);
        }
        if (channel_levels && t_count > 0) (*channel_levels)[static_cast<std::size_t>(k)] = static_cast<std::int64_t>(hi) - lo + 1;
    }
}

}  // namespace quantplan::errorsim
