#pragma once
// The element grids and scale groups every quantizer in the lab is built from (internal to core).
//
// A grid is a payload format plus how its scale is stored:
//   integer b bits, symmetric:  code q in [-(2^(b-1)-1), 2^(b-1)-1], x ~ q * scale,
//                               scale = amax / (2^(b-1)-1)
//   integer b bits, asymmetric: code q in [0, 2^b-1], x ~ (q - zero) * scale, with the range
//                               widened to include 0 (GPTQ's rule), scale = (hi - lo) / (2^b-1),
//                               zero = clamp(round(-lo / scale), 0, 2^b-1)
//   float (fp8, fp4):           x ~ decode(encode(x / scale)) * scale, scale = amax / max_finite
// Rounding is to nearest with ties to even; codes outside the grid clip to its ends. The scale is
// itself rounded to its storage format: fp32 (kept), fp16 or bf16 (round to nearest even), e4m3
// with an fp32 second-level scale per tensor (NVFP4: scale = e4m3(amax / 6 / s2) * s2 with
// s2 = tensor amax / (6 * 448)), or e8m0 (OCP MX: 2^(floor(log2 amax) - emax of the payload)).
#include <Eigen/Core>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/base/dtype.h"
#include "core/errorsim/minifloat.h"
#include "core/scheme/scheme.h"

namespace quantplan::errorsim {

// Column-major float matrices, as weights [N x K] and activations [T x K] are held in the lab.
using MatrixF = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic>;
// Code ordinals (integer codes, or signed minifloat ordinals) with the shape of a quantized matrix.
using MatrixI = Eigen::Matrix<std::int32_t, Eigen::Dynamic, Eigen::Dynamic>;

// A resolved element grid.
struct Grid {
    DType payload = DType::Int4;
    const MinifloatFormat* fp = nullptr;  // the payload format for floats, nullptr for integers
    int bits = 4;                         // payload bits per element
    bool symmetric = true;
    std::int64_t qmin = 0;                // integer code range
    std::int64_t qmax = 0;
    DType scale_format = DType::Fp32;     // Fp32, Fp16, Bf16, Fp8E4M3 (two-level) or Fp8E8M0

    bool is_integer() const { return fp == nullptr; }
    bool two_level() const { return scale_format == DType::Fp8E4M3; }
    // The largest magnitude a code represents at scale 1 (2^(b-1)-1, or the float max).
    double payload_max() const;
    // The number of codes the grid has (2^b for integers and floats alike).
    std::int64_t code_count() const { return std::int64_t{1} << bits; }
};

// The default scale storage of a weight payload: fp16 for integers; for fp8 fp32 per tensor and
// bf16 otherwise; e4m3 (NVFP4) for fp4.
DType default_weight_scale_format(DType payload, const GroupShape& group);

// Builds a grid. Throws Error naming `field` for a payload that is not int2..int8, fp8 or fp4, an
// asymmetric float, a scale format outside {fp32, fp16, bf16, fp8_e4m3, fp8_e8m0}, or e8m0 scales
// on an integer payload.
Grid make_grid(DType payload, bool symmetric, DType scale_format, const std::string& field);

// One scale group's parameters: x ~ (code - zero) * scale (zero is 0 for symmetric and floats).
struct GroupParams {
    double scale = 1.0;
    double zero = 0.0;
};

// How a rows x cols tensor is cut into scale groups of group_rows x group_cols (edges partial).
struct ScaleLayout {
    std::int64_t rows = 0;
    std::int64_t cols = 0;
    std::int64_t group_rows = 0;
    std::int64_t group_cols = 0;
    std::int64_t row_groups = 0;
    std::int64_t col_groups = 0;

    std::int64_t group_count() const { return row_groups * col_groups; }
    // The index of the group holding element (r, c).
    std::int64_t index(std::int64_t r, std::int64_t c) const { return (r / group_rows) * col_groups + c / group_cols; }
};

// For every row r, (r / group_rows) * col_groups: the row part of a group index, so inner loops
// over a column add the column group and divide nothing.
std::vector<std::int64_t> row_group_bases(const ScaleLayout& layout);

// The layout of `group` on a rows x cols tensor. Throws Error naming `field` for a group extent
// that is 0 or below -1.
ScaleLayout make_layout(const GroupShape& group, std::int64_t rows, std::int64_t cols, const std::string& field);

// The second-level (per-tensor) scale of a two-level grid for a tensor whose largest magnitude is
// `tensor_amax`; 1 for single-level grids.
double second_level_scale(const Grid& grid, double tensor_amax);

// The parameters of a group whose values lie in [lo, hi] (lo <= hi), shrunk by `clip` in (0, 1].
GroupParams fit_group(const Grid& grid, double lo, double hi, double second_level, double clip = 1.0);

// Quantizes `x` on `grid` with `params`: returns the dequantized value and stores the code's
// ordinal in `*ordinal` when it is not null. Inline: it runs once per element of every matrix.
inline double quantize_value(const Grid& grid, const GroupParams& params, double x, std::int32_t* ordinal) {
    if (!(params.scale > 0.0)) {
        // A group of zeros (or a scale that underflowed its format): every code is the zero code.
        if (ordinal) *ordinal = static_cast<std::int32_t>(params.zero);
        return 0.0;
    }
    if (grid.fp) {
        const std::uint32_t code = encode_minifloat(x / params.scale, *grid.fp);
        if (ordinal) *ordinal = static_cast<std::int32_t>(minifloat_ordinal(code, *grid.fp));
        return decode_minifloat(code, *grid.fp) * params.scale;
    }
    // Round half to even (nearbyint in the default rounding mode), then clip to the code range.
    double q = std::nearbyint(x / params.scale) + params.zero;
    q = q < static_cast<double>(grid.qmin) ? static_cast<double>(grid.qmin) : q;
    q = q > static_cast<double>(grid.qmax) ? static_cast<double>(grid.qmax) : q;
    if (ordinal) *ordinal = static_cast<std::int32_t>(q);
    return (q - params.zero) * params.scale;
}

// Parameters of every group of `w` (row-major group index, see ScaleLayout::index), from the
// values' ranges; `clip` (per group, optional) shrinks each range.
std::vector<GroupParams> fit_matrix(const Grid& grid, const ScaleLayout& layout, const MatrixF& w,
                                    const std::vector<double>* clip = nullptr);

// Quantizes `w` with per-group `params`; writes the dequantized matrix and, if asked, the ordinals.
void quantize_matrix(const Grid& grid, const ScaleLayout& layout, const std::vector<GroupParams>& params,
                     const MatrixF& w, MatrixF& out, MatrixI* ordinals);

// The median, over every (output row, scale group) slice, of the levels the slice's codes span
// (max ordinal - min ordinal + 1).
double median_levels_per_row_group(const ScaleLayout& layout, const MatrixI& ordinals);

// Payload + scale (+ zero point) + second-level scale bits per element of a tensor quantized with
// `grid` and `layout`. Zero points are stored at the payload width.
double effective_bits(const Grid& grid, const ScaleLayout& layout);

// Activation quantization of a T x K matrix: one scale per token (row) or per tensor; `fixed`
// supplies a static (calibrated) scale instead of one computed from `x`. Writes the dequantized
// matrix; `channel_levels` (size K), if given, receives the levels each channel's codes span.
void quantize_activations(const Grid& grid, const MatrixF& x, bool per_token, const std::optional<GroupParams>& fixed,
                          MatrixF& out, std::vector<std::int64_t>* channel_levels);

// The static per-tensor activation parameters calibrated on `x` (its full range).
GroupParams calibrate_activation_params(const Grid& grid, const MatrixF& x);

// The smallest and largest of a column range, widened to include 0; used by GPTQ at group starts.
void range_of(const float* begin, std::int64_t count, std::int64_t stride, double& lo, double& hi);

}  // namespace quantplan::errorsim
