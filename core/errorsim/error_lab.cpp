// run_error_lab: one quantization of one layer, its readouts and its decision log.
#include "core/errorsim/error_lab.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/base/error.h"
#include "core/base/stats.h"
#include "core/errorsim/gptq.h"
#include "core/errorsim/layer_data.h"
#include "core/errorsim/methods.h"
#include "core/errorsim/parallelism.h"
#include "core/errorsim/quantizer.h"

namespace quantplan::errorsim {
namespace {

std::string pct(double fraction) {
    char buf[32];
    const double p = 100.0 * fraction;
    std::snprintf(buf, sizeof buf, p < 1.0 ? "%.3f%%" : "%.2f%%", p);
    return buf;
}

std::string num(double v, int digits) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.*f", digits, v);
    return buf;
}

std::string upper(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return out;
}

// "an fp16", "a bf16": the article as the name is read aloud.
std::string article(std::string_view name) {
    const bool vowel_sound = !name.empty() && (name[0] == 'f' || name[0] == 'e' || name[0] == 'i');
    return std::string(vowel_sound ? "an " : "a ") + std::string(name);
}


double relative_error(const MatrixF& approx, const MatrixF& exact, double exact_norm2) {
    const double e2 = (approx - exact).cast<double>().squaredNorm();
    return exact_norm2 > 0.0 ? std::sqrt(e2 / exact_norm2) : std::sqrt(e2);
}

// Multiply-adds of one run: the output products and a GPTQ or AWQ pass over the Hessian.
double layer_macs(const LayerData& d) {
    const double k = static_cast<double>(d.w.cols()), n = static_cast<double>(d.w.rows());
    return static_cast<double>(d.x_calibration.rows() + d.x_heldout.rows()) * k * n + n * k * k;
}

void validate_methods(const MethodToggles& m) {
    if (m.awq && m.smoothquant)
        throw Error("methods", "AWQ and SmoothQuant both choose the per-input-channel scale; turn one of them off");
    if (!std::isfinite(m.smoothquant_alpha) || m.smoothquant_alpha < 0.0 || m.smoothquant_alpha > 1.0)
        throw Error("methods.smoothquant_alpha", "must be in [0, 1]");
    if (!std::isfinite(m.gptq_dampening) || m.gptq_dampening <= 0.0 || m.gptq_dampening > 1.0)
        throw Error("methods.gptq_dampening", "must be in (0, 1]");
    if (m.gptq_block_size < 1 || m.gptq_block_size > 8192) throw Error("methods.gptq_block_size", "must be 1 to 8192");
    if (m.awq_grid_points < 1 || m.awq_grid_points > 100) throw Error("methods.awq_grid_points", "must be 1 to 100");
}

// The activation grid, or nullopt for 16-bit activations.
std::optional<Grid> activation_grid(const ActivationQuantSpec& a) {
    if (!a.format) return std::nullopt;
    if (a.is_static && a.per_token)
        throw Error("activations.is_static", "static activation scales are calibrated once per tensor; a per-token scale is dynamic by nature");
    return make_grid(*a.format, a.symmetric, DType::Fp32, "activations.format");
}

std::string format_words(const Grid& g) {
    if (g.is_integer()) return upper(dtype_name(g.payload)) + (g.symmetric ? " symmetric" : " asymmetric");
    return upper(dtype_name(g.payload));
}

// The quantized layer before readouts: weights in the (possibly rescaled) space, and the rescale.
struct Quantized {
    MatrixF w_scaled_q;            // Q(W s), N x K
    MatrixI ordinals;
    std::vector<double> scale;     // s (empty: none)
};

// The layer outputs of the quantized layer on `x` and the activation levels when asked.
MatrixF layer_outputs(const Quantized& q, const std::optional<Grid>& act, const ActivationQuantSpec& spec,
                      const std::optional<GroupParams>& fixed, const MatrixF& x, std::vector<std::int64_t>* levels) {
    if (!act) {
        // 16-bit activations: x (W_q s^-1)^T, the rescale folded into the weights.
        MatrixF w_eff = q.w_scaled_q;
        if (!q.scale.empty())
            for (Eigen::Index j = 0; j < w_eff.cols(); ++j) w_eff.col(j) *= static_cast<float>(1.0 / q.scale[static_cast<std::size_t>(j)]);
        return x * w_eff.transpose();
    }
    MatrixF xs = x;
    if (!q.scale.empty())
        for (Eigen::Index j = 0; j < xs.cols(); ++j) xs.col(j) *= static_cast<float>(1.0 / q.scale[static_cast<std::size_t>(j)]);
    MatrixF xq;
    quantize_activations(*act, xs, spec.per_token, fixed, xq, levels);
    return xq * q.w_scaled_q.transpose();
}

}  // namespace

WeightQuantSpec WeightQuantSpec::nvfp4() {
    WeightQuantSpec s;
    s.format = DType::Fp4E2M1;
    s.group = GroupShape::per_group(16);
    s.symmetric = true;
    s.scale_format = DType::Fp8E4M3;
    return s;
}

WeightQuantSpec WeightQuantSpec::mxfp4() {
    WeightQuantSpec s;
    s.format = DType::Fp4E2M1;
    s.group = GroupShape::per_group(32);
    s.symmetric = true;
    s.scale_format = DType::Fp8E8M0;
    return s;
}

std::string weight_format_name(const WeightQuantSpec& s) {
    const DType scale = s.scale_format.value_or(default_weight_scale_format(s.format, s.group));
    if (s.format == DType::Fp4E2M1) {
        if (scale == DType::Fp8E4M3) return "nvfp4";
        if (scale == DType::Fp8E8M0) return "mxfp4";
        return "fp4_e2m1";
    }
    std::string name(dtype_name(s.format));
    if (dtype_is_integer(s.format)) {
        const bool default_sym = dtype_bits(s.format) >= 8;
        if (s.symmetric != default_sym) name += s.symmetric ? "-sym" : "-asym";
    }
    return name;
}

std::string granularity_name(const GroupShape& g) {
    if (g.is_per_tensor()) return "per-tensor";
    if (g.is_per_row()) return "per-channel";
    if (g.is_per_group()) return "g" + std::to_string(g.cols);
    if (g.rows > 0 && g.cols > 0) return "block" + std::to_string(g.rows) + "x" + std::to_string(g.cols);
    return std::to_string(g.rows) + "x" + std::to_string(g.cols);
}

ErrorLabResult run_error_lab(const ErrorLabConfig& config) { return run_error_lab(config, generate_layer(config.layer)); }

ErrorLabResult run_error_lab(const ErrorLabConfig& config, const Layer& layer) {
    if (layer.empty()) throw Error("layer", "no layer was generated");
    const LayerData& d = layer.data();
    const std::int64_t n = d.w.rows(), k = d.w.cols();
    const EigenThreadScope threads(layer_macs(d) < kParallelThresholdMacs);
    const WeightQuantSpec& ws = config.weights;
    const MethodToggles& m = config.methods;
    validate_methods(m);
    const DType scale_format = ws.scale_format.value_or(default_weight_scale_format(ws.format, ws.group));
    const Grid grid = make_grid(ws.format, ws.symmetric, scale_format, "weights.format");
    const ScaleLayout layout = make_layout(ws.group, n, k, "weights.group");
    const std::optional<Grid> act = activation_grid(config.activations);

    ErrorLabResult r;
    std::vector<std::string>& log = r.log;
    r.effective_bits = effective_bits(grid, layout);

    // 1. The bits.
    {
        std::string line = format_words(grid) + " weights, " + granularity_name(ws.group) + ": " + std::to_string(layout.group_count()) +
                           " scale group" + (layout.group_count() == 1 ? "" : "s") + " of " +
                           std::to_string(layout.group_rows * layout.group_cols) + " weights, each with " +
                           article(dtype_name(scale_format)) + " scale";
        const double per_group = static_cast<double>(layout.group_rows * layout.group_cols);
        std::string sum = std::to_string(grid.bits) + " + " + std::to_string(dtype_bits(scale_format)) + "/" + num(per_group, 0);
        if (grid.is_integer() && !grid.symmetric) {
            line += " and a " + std::to_string(grid.bits) + "-bit zero point";
            sum += " + " + std::to_string(grid.bits) + "/" + num(per_group, 0);
        }
        if (grid.two_level()) {
            line += ", plus one fp32 scale for the tensor";
            sum += " + 32/" + std::to_string(n * k);
        }
        log.push_back(line + ": " + sum + " = " + num(r.effective_bits, 3) + " bits per weight.");
    }

    // 2. The rescale (AWQ or SmoothQuant).
    Quantized q;
    std::vector<double> clip;
    if (m.awq) {
        const AwqOutcome awq = awq_search(d, grid, layout, m.awq_grid_points, m.awq_clip_search);
        q.scale = awq.scale;
        r.awq_alpha = awq.alpha;
        clip = awq.clip;
        const auto [mn, mx] = std::minmax_element(q.scale.begin(), q.scale.end());
        log.push_back("AWQ tried " + std::to_string(m.awq_grid_points) + " exponents of s = mean|x|^a on the " +
                      std::to_string(d.x_calibration.rows()) + " calibration tokens and chose a = " + num(awq.alpha, 2) +
                      ": scales from " + num(*mn, 3) + "x to " + num(*mx, 2) + "x, the loud channels' weights scaled up to get finer steps" +
                      (awq.alpha == 0.0 ? " (a = 0 is plain round to nearest: no exponent helped)" : "") + ".");
        if (m.awq_clip_search) {
            double clipped = 0;
            for (double c : clip) clipped += c < 1.0 ? 1 : 0;
            log.push_back("AWQ's clip search shrank the range of " + num(clipped, 0) + " of " + std::to_string(clip.size()) +
                          " scale groups (ratios 1 to 0.55), trading clipped outliers for finer steps.");
        }
    } else if (m.smoothquant) {
        q.scale = smoothquant_scales(d, m.smoothquant_alpha);
        log.push_back("SmoothQuant s_j = max|x_j|^" + num(m.smoothquant_alpha, 2) + " / max|w_j|^" + num(1.0 - m.smoothquant_alpha, 2) +
                      ": the activations are divided by s, the weights multiplied by it, moving the outliers' range into the weights.");
    }
    const MatrixF w_scaled = q.scale.empty() ? d.w : scale_columns(d.w, q.scale);
    r.weight_spread_before = input_channel_spread(d.w);
    r.weight_spread_after = input_channel_spread(w_scaled);

    // 3. The rounding.
    std::optional<GptqOutcome> gptq;
    if (m.gptq) {
        MatrixF target = w_scaled;
        if (!clip.empty()) {
            // AWQ's clip ranges applied to the weights before GPTQ picks its own scales.
            std::vector<float> lo(clip.size(), 0.0f), hi(clip.size(), 0.0f);
            for (std::int64_t c = 0; c < k; ++c)
                for (std::int64_t row = 0; row < n; ++row) {
                    const std::size_t gi = static_cast<std::size_t>(layout.index(row, c));
                    lo[gi] = std::min(lo[gi], w_scaled(row, c));
                    hi[gi] = std::max(hi[gi], w_scaled(row, c));
                }
            for (std::int64_t c = 0; c < k; ++c)
                for (std::int64_t row = 0; row < n; ++row) {
                    const std::size_t gi = static_cast<std::size_t>(layout.index(row, c));
                    target(row, c) = std::clamp(target(row, c), static_cast<float>(lo[gi] * clip[gi]), static_cast<float>(hi[gi] * clip[gi]));
                }
        }
        GptqOptions opt;
        opt.dampening = m.gptq_dampening;
        opt.block_size = m.gptq_block_size;
        opt.act_order = m.act_order;
        gptq = gptq_quantize(grid, layout, target, d.hessian, q.scale, opt);
        q.w_scaled_q = std::move(gptq->dequantized);
        q.ordinals = std::move(gptq->ordinals);
    } else {
        quantize_matrix(grid, layout, fit_matrix(grid, layout, w_scaled, clip.empty() ? nullptr : &clip), w_scaled, q.w_scaled_q, &q.ordinals);
    }
    r.median_levels_per_group = median_levels_per_row_group(layout, q.ordinals);

    // 4. Readouts.
    {
        MatrixF w_eff = q.w_scaled_q;
        if (!q.scale.empty())
            for (std::int64_t j = 0; j < k; ++j) w_eff.col(j) *= static_cast<float>(1.0 / q.scale[static_cast<std::size_t>(j)]);
        r.weight_error = relative_error(w_eff, d.w, d.w_norm2);
    }
    std::optional<GroupParams> fixed;
    if (act && config.activations.is_static) {
        MatrixF xs = d.x_calibration;
        if (!q.scale.empty())
            for (std::int64_t j = 0; j < k; ++j) xs.col(j) *= static_cast<float>(1.0 / q.scale[static_cast<std::size_t>(j)]);
        fixed = calibrate_activation_params(*act, xs);
    }
    std::vector<std::int64_t> channel_levels;
    const MatrixF y_cal = layer_outputs(q, act, config.activations, fixed, d.x_calibration, act ? &channel_levels : nullptr);
    r.layer_error_calibration = relative_error(y_cal, d.y_calibration, d.y_calibration_norm2);
    const MatrixF y_held = layer_outputs(q, act, config.activations, fixed, d.x_heldout, nullptr);
    r.layer_error_heldout = relative_error(y_held, d.y_heldout, d.y_heldout_norm2);
    if (act) {
        std::vector<double> ordinary;
        for (std::int64_t j = 0; j < k; ++j)
            if (!d.is_outlier[static_cast<std::size_t>(j)]) ordinary.push_back(static_cast<double>(channel_levels[static_cast<std::size_t>(j)]));
        r.median_levels_activation_channel = median(ordinary);
    }

    // 5. The log, one sentence per number.
    log.push_back("The median output row spans " + num(r.median_levels_per_group, 0) + " of the " + std::to_string(grid.code_count()) +
                  " levels in its scale group" +
                  (layout.group_rows == n && layout.group_cols == k ? ": one scale for the whole matrix, set by its largest weight." : "."));
    if (m.gptq) {
        log.push_back("GPTQ rounded column by column" + std::string(m.act_order ? " in act-order (descending Hessian diagonal)" : "") +
                      ", feeding each column's error forward through the calibration Hessian (dampening " + num(100.0 * gptq->dampening_used, 2) +
                      "% of its mean diagonal, blocks of " + std::to_string(m.gptq_block_size) + " columns" +
                      (gptq->dynamic_groups ? ", group scales fitted as each group is reached" : ", scales fixed up front") + ").");
    }
    if (m.gptq || m.awq || m.smoothquant) {
        // The same grid with plain round to nearest, so the log can say what the methods bought.
        ErrorLabConfig plain = config;
        plain.methods = MethodToggles{};
        const ErrorLabResult base = run_error_lab(plain, layer);
        log.push_back("Round to nearest on the same grid: layer error " + pct(base.layer_error_calibration) + " on calibration tokens, " +
                      pct(base.layer_error_heldout) + " held out, weight error " + pct(base.weight_error) + ".");
    }
    log.push_back("Layer output error " + pct(r.layer_error_calibration) + " on the " + std::to_string(d.x_calibration.rows()) +
                  " calibration tokens (the objective GPTQ and AWQ minimise, so a method marks its own homework there) and " +
                  pct(r.layer_error_heldout) + " on " + std::to_string(d.x_heldout.rows()) + " held-out tokens.");
    log.push_back("Weight tensor error " + pct(r.weight_error) +
                  ": the quantized weights against the originals, unweighted by how loud each input channel is" +
                  (q.scale.empty() ? "." : ", with the rescale folded back."));
    if (q.scale.empty()) {
        log.push_back("Per-input-channel weight magnitude spread (largest max|w_j| over smallest) is " + num(r.weight_spread_before, 1) + "x.");
    } else {
        log.push_back("Per-input-channel weight magnitude spread went from " + num(r.weight_spread_before, 1) + "x to " +
                      num(r.weight_spread_after, 1) + "x: the rescale moved range " +
                      (r.weight_spread_after > r.weight_spread_before ? "into" : "out of") + " the weights.");
    }
    if (act) {
        log.push_back(format_words(*act) + " activations, " +
                      (config.activations.is_static ? std::string("one static scale calibrated on the calibration tokens")
                                                    : std::string(config.activations.per_token ? "one dynamic scale per token" : "one dynamic scale per batch")) +
                      ": the median ordinary input channel spans " + num(r.median_levels_activation_channel, 0) + " of " +
                      std::to_string(act->code_count()) + " levels" +
                      (d.outlier_channels.empty() ? "." : ", because the " + std::to_string(d.outlier_channels.size()) + " outlier channels set the scale."));
    } else {
        log.push_back("Activations stay 16-bit: only the weights are quantized (W" + std::to_string(grid.bits) + "A16).");
    }
    if (m.act_order && !m.gptq) log.push_back("Act-order is a GPTQ option and has no effect without GPTQ.");
    if ((m.gptq || m.awq) && d.x_calibration.rows() < k)
        log.push_back("Only " + std::to_string(d.x_calibration.rows()) + " calibration tokens for " + std::to_string(k) +
                      " input channels: the calibration Hessian is rank-deficient, so the methods can fit the calibration tokens "
                      "beyond what the held-out tokens confirm.");
    return r;
}

std::vector<LadderRow> granularity_ladder(const ErrorLabConfig& base) { return granularity_ladder(base, generate_layer(base.layer)); }

std::vector<LadderRow> granularity_ladder(const ErrorLabConfig& base, const Layer& layer) {
    static constexpr GroupShape kRungs[] = {GroupShape::per_tensor(), GroupShape::per_row(), GroupShape::per_group(128),
                                            GroupShape::per_group(64), GroupShape::per_group(32)};
    std::vector<LadderRow> rows;
    for (const GroupShape& g : kRungs) {
        ErrorLabConfig c = base;
        c.weights.group = g;
        rows.push_back(LadderRow{granularity_name(g), g, run_error_lab(c, layer)});
    }
    return rows;
}

}  // namespace quantplan::errorsim
