// The synthetic layer generator (docs/errorsim.md, "The layer").
//
// Weights: W[i][j] = r_i c_j g_ij / sqrt(K), with g standard normal and log-normal output-row and
// input-column scales r, c: real layers' rows differ in magnitude (which is what per-channel
// scales absorb) and their columns less so.
// Activations: every token is x = s_t (a .* x0) on ordinary channels, with x0 a unit-variance
// vector drawn from a covariance with a decaying spectrum: x0 = (B (sigma .* z) + floor n) / norm,
// B a fixed K x R Gaussian basis, sigma_r = (r + 1)^-decay for the first R = min(K, 32) directions
// and a floor of R^-decay on every channel, z and n standard normal per token. Hidden states are
// correlated across channels like this (a few directions carry most of the energy), which is what
// lets GPTQ's Hessian help on tokens it was not fitted on. s_t is a log-normal token loudness, a_j
// a log-normal channel scale. The outlier channels carry a systematic offset of fixed sign plus the
// same correlated signal: x = s_t M (0.8 sign_j + 0.6 x0_j), RMS M times an ordinary channel's,
// the shape LLM.int8() reports (the same few dimensions, large in nearly every token).
//
// Every random number comes from the lab's Rng in a fixed order, and the sums run in a fixed order
// in plain loops (not a BLAS), so a spec gives the same bits on every platform.
#include <algorithm>
#include <cmath>

#include "core/base/error.h"
#include "core/errorsim/layer_data.h"
#include "core/errorsim/parallelism.h"
#include "core/errorsim/rng.h"

namespace quantplan::errorsim {
namespace {

// Log-normal sigma of the ordinary channels' activation scale a_j and of the token loudness s_t.
constexpr double kActivationChannelSpread = 0.3;
constexpr double kTokenSpread = 0.25;
// Directions of the activation covariance drawn explicitly; the rest is the spectrum's floor.
constexpr std::int64_t kSpectrumRank = 32;
// Share of an outlier channel's mean square in its systematic offset (0.8^2) and in the
// correlated signal (0.6^2): 0.64 + 0.36 = 1, so its RMS is the outlier magnitude.
constexpr double kOutlierOffset = 0.8;
constexpr double kOutlierSignal = 0.6;

// Independent streams per purpose, so that changing the token count leaves the weights alone.
enum class Stream : std::uint64_t { Weights = 1, Channels = 2, Calibration = 3, Heldout = 4 };

Rng stream_rng(std::uint64_t seed, Stream stream) {
    std::uint64_t s = seed ^ (static_cast<std::uint64_t>(stream) * 0xD1B54A32D192ED03ull);
    return Rng(splitmix64_next(s));
}

void check_positive(std::int64_t v, const char* field) {
    if (v <= 0) throw Error(std::string("layer.") + field, "must be positive, got " + std::to_string(v));
}

void check_spread(double v, const char* field) {
    if (!std::isfinite(v) || v < 0.0 || v > 3.0)
        throw Error(std::string("layer.") + field, "must be a log-normal sigma in [0, 3]");
}

// The channel-side structure shared by calibration and held-out tokens.
struct ChannelModel {
    std::int64_t k = 0;
    std::int64_t rank = 0;
    std::vector<double> basis_t;   // R x K, row r = basis direction r (B transposed)
    std::vector<double> sigma;     // R
    double floor = 0.0;
    std::vector<double> inv_norm;  // K: 1 / expected RMS of the mixed signal
    std::vector<double> channel_scale;  // K: a_j (ordinary) or the outlier magnitude
    std::vector<double> outlier_sign;   // K: +-1 on outlier channels, 0 elsewhere
};

void fill_tokens(const ChannelModel& m, const LayerSpec& spec, Rng& rng, std::int64_t tokens, MatrixF& x, LayerData& d) {
    x.resize(tokens, m.k);
    std::vector<double> sz(static_cast<std::size_t>(m.rank));
    std::vector<double> acc(static_cast<std::size_t>(m.k));
    for (std::int64_t t = 0; t < tokens; ++t) {
        const double loud = det_exp(kTokenSpread * rng.normal());
        d.token_loudness.push_back(loud);
        if (spec.correlated_activations) {
            for (std::int64_t r = 0; r < m.rank; ++r) sz[static_cast<std::size_t>(r)] = m.sigma[static_cast<std::size_t>(r)] * rng.normal();
            for (std::int64_t j = 0; j < m.k; ++j) acc[static_cast<std::size_t>(j)] = m.floor * rng.normal();
            // Row by row over the basis: each acc[j] sums in the same order r = 0..R-1 everywhere.
            for (std::int64_t r = 0; r < m.rank; ++r) {
                const double s = sz[static_cast<std::size_t>(r)];
                const double* row = m.basis_t.data() + r * m.k;
                for (std::int64_t j = 0; j < m.k; ++j) acc[static_cast<std::size_t>(j)] += s * row[j];
            }
            for (std::int64_t j = 0; j < m.k; ++j) acc[static_cast<std::size_t>(j)] *= m.inv_norm[static_cast<std::size_t>(j)];
        } else {
            for (std::int64_t j = 0; j < m.k; ++j) acc[static_cast<std::size_t>(j)] = rng.normal();
        }
        for (std::int64_t j = 0; j < m.k; ++j) {
            const std::size_t jj = static_cast<std::size_t>(j);
            const double x0 = acc[jj];
            double v = 0.0;
            if (m.outlier_sign[jj] != 0.0) {
                const double unit = kOutlierOffset * m.outlier_sign[jj] + kOutlierSignal * x0;
                d.outlier_unit.push_back(unit);
                v = m.channel_scale[jj] * unit;
            } else {
                v = m.channel_scale[jj] * x0;
            }
            x(t, j) = static_cast<float>(loud * v);
        }
    }
}

}  // namespace

void validate_layer_spec(const LayerSpec& s) {
    check_positive(s.out_features, "out_features");
    check_positive(s.in_features, "in_features");
    check_positive(s.calibration_tokens, "calibration_tokens");
    check_positive(s.heldout_tokens, "heldout_tokens");
    if (s.in_features > kMaxInFeatures)
        throw Error("layer.in_features", "at most " + std::to_string(kMaxInFeatures) + " (the Hessian is K x K), got " + std::to_string(s.in_features));
    if (s.out_features > kMaxElements / s.in_features)
        throw Error("layer.out_features", "the weight matrix may hold at most 2^26 elements");
    if (s.calibration_tokens > kMaxElements / s.in_features || s.heldout_tokens > kMaxElements / s.in_features)
        throw Error("layer.calibration_tokens", "an activation matrix may hold at most 2^26 elements");
    if (s.outlier_channels < 0 || s.outlier_channels > s.in_features)
        throw Error("layer.outlier_channels", "must be between 0 and in_features (" + std::to_string(s.in_features) + "), got " +
                                                  std::to_string(s.outlier_channels));
    if (!std::isfinite(s.outlier_magnitude) || s.outlier_magnitude <= 0.0 || s.outlier_magnitude > 1e4)
        throw Error("layer.outlier_magnitude", "must be a finite ratio in (0, 10000]");
    if (!std::isfinite(s.spectrum_decay) || s.spectrum_decay < 0.0 || s.spectrum_decay > 4.0)
        throw Error("layer.spectrum_decay", "must be in [0, 4]");
    check_spread(s.output_channel_spread, "output_channel_spread");
    check_spread(s.input_channel_spread, "input_channel_spread");
}

void generate_activations(const LayerSpec& spec, LayerData& d) {
    const std::int64_t k = spec.in_features;
    ChannelModel m;
    m.k = k;
    m.rank = std::min(k, kSpectrumRank);
    Rng rng = stream_rng(spec.seed, Stream::Channels);

    // Outlier channels: a partial Fisher-Yates shuffle picks them without bias.
    std::vector<std::int64_t> order(static_cast<std::size_t>(k));
    for (std::int64_t j = 0; j < k; ++j) order[static_cast<std::size_t>(j)] = j;
    for (std::int64_t i = 0; i < spec.outlier_channels; ++i) {
        const std::int64_t pick = i + static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(k - i)));
        std::swap(order[static_cast<std::size_t>(i)], order[static_cast<std::size_t>(pick)]);
    }
    d.outlier_channels.assign(order.begin(), order.begin() + spec.outlier_channels);
    std::sort(d.outlier_channels.begin(), d.outlier_channels.end());
    d.is_outlier.assign(static_cast<std::size_t>(k), false);
    for (std::int64_t j : d.outlier_channels) d.is_outlier[static_cast<std::size_t>(j)] = true;

    m.channel_scale.resize(static_cast<std::size_t>(k));
    m.outlier_sign.assign(static_cast<std::size_t>(k), 0.0);
    for (std::int64_t j = 0; j < k; ++j) {
        const std::size_t jj = static_cast<std::size_t>(j);
        const double a = det_exp(kActivationChannelSpread * rng.normal());
        const bool sign_positive = (rng.next_u64() >> 63) != 0;
        if (d.is_outlier[jj]) {
            m.channel_scale[jj] = spec.outlier_magnitude;
            m.outlier_sign[jj] = sign_positive ? 1.0 : -1.0;
        } else {
            m.channel_scale[jj] = a;
        }
    }
    m.sigma.resize(static_cast<std::size_t>(m.rank));
    for (std::int64_t r = 0; r < m.rank; ++r)
        m.sigma[static_cast<std::size_t>(r)] = det_exp(-spec.spectrum_decay * det_log(static_cast<double>(r + 1)));
    m.floor = det_exp(-spec.spectrum_decay * det_log(static_cast<double>(m.rank)));
    m.basis_t.resize(static_cast<std::size_t>(m.rank * k));
    for (double& b : m.basis_t) b = rng.normal();
    m.inv_norm.resize(static_cast<std::size_t>(k));
    for (std::int64_t j = 0; j < k; ++j) {
        double var = m.floor * m.floor;
        for (std::int64_t r = 0; r < m.rank; ++r) {
            const double v = m.sigma[static_cast<std::size_t>(r)] * m.basis_t[static_cast<std::size_t>(r * k + j)];
            var += v * v;
        }
        m.inv_norm[static_cast<std::size_t>(j)] = 1.0 / std::sqrt(var);
    }

    d.token_loudness.clear();
    d.outlier_unit.clear();
    Rng cal = stream_rng(spec.seed, Stream::Calibration);
    fill_tokens(m, spec, cal, spec.calibration_tokens, d.x_calibration, d);
    Rng held = stream_rng(spec.seed, Stream::Heldout);
    fill_tokens(m, spec, held, spec.heldout_tokens, d.x_heldout, d);
}

void finish_layer(LayerData& d) {
    const std::int64_t k = d.w.cols();
    const double macs = static_cast<double>(d.x_calibration.rows() + d.x_heldout.rows()) * static_cast<double>(k) *
                        static_cast<double>(std::max<std::int64_t>(k, d.w.rows()));
    const EigenThreadScope threads(macs < kParallelThresholdMacs);
    d.y_calibration.noalias() = d.x_calibration * d.w.transpose();
    d.y_heldout.noalias() = d.x_heldout * d.w.transpose();
    d.hessian.setZero(k, k);
    d.hessian.selfadjointView<Eigen::Lower>().rankUpdate(d.x_calibration.transpose());
    d.hessian.triangularView<Eigen::StrictlyUpper>() = d.hessian.transpose();
    d.mean_abs_x.assign(static_cast<std::size_t>(k), 0.0);
    d.max_abs_x.assign(static_cast<std::size_t>(k), 0.0);
    for (std::int64_t j = 0; j < k; ++j) {
        double sum = 0.0, mx = 0.0;
        for (std::int64_t t = 0; t < d.x_calibration.rows(); ++t) {
            const double a = std::fabs(static_cast<double>(d.x_calibration(t, j)));
            sum += a;
            mx = std::max(mx, a);
        }
        d.mean_abs_x[static_cast<std::size_t>(j)] = sum / static_cast<double>(d.x_calibration.rows());
        d.max_abs_x[static_cast<std::size_t>(j)] = mx;
    }
    d.w_norm2 = d.w.cast<double>().squaredNorm();
    d.y_calibration_norm2 = d.y_calibration.cast<double>().squaredNorm();
    d.y_heldout_norm2 = d.y_heldout.cast<double>().squaredNorm();
}

Layer generate_layer(const LayerSpec& spec) {
    validate_layer_spec(spec);
    auto d = std::make_shared<LayerData>();
    d->spec = spec;
    Rng rng = stream_rng(spec.seed, Stream::Weights);
    const std::int64_t n = spec.out_features, k = spec.in_features;
    std::vector<double> row(static_cast<std::size_t>(n)), col(static_cast<std::size_t>(k));
    for (double& r : row) r = det_exp(spec.output_channel_spread * rng.normal());
    for (double& c : col) c = det_exp(spec.input_channel_spread * rng.normal());
    const double unit = 1.0 / std::sqrt(static_cast<double>(k));
    d->w.resize(n, k);
    for (std::int64_t i = 0; i < n; ++i)
        for (std::int64_t j = 0; j < k; ++j)
            d->w(i, j) = static_cast<float>(row[static_cast<std::size_t>(i)] * col[static_cast<std::size_t>(j)] * rng.normal() * unit);
    generate_activations(spec, *d);
    finish_layer(*d);
    return Layer(std::move(d));
}

Layer layer_from_weights(const RealWeights& weights, const LayerSpec& base, const RealWeights* activations) {
    LayerSpec spec = base;
    spec.out_features = weights.rows;
    spec.in_features = weights.cols;
    if (weights.rows <= 0 || weights.cols <= 0 || static_cast<std::int64_t>(weights.values.size()) != weights.rows * weights.cols)
        throw Error("tensor '" + weights.name + "'", "values do not match its shape");
    if (activations) {
        if (activations->cols != weights.cols)
            throw Error("activations '" + activations->name + "'", "has " + std::to_string(activations->cols) + " channels; the weights take " +
                                                                      std::to_string(weights.cols));
        if (activations->rows < 2) throw Error("activations '" + activations->name + "'", "needs at least 2 tokens (calibration and held-out)");
        spec.calibration_tokens = (activations->rows + 1) / 2;
        spec.heldout_tokens = activations->rows - spec.calibration_tokens;
    }
    validate_layer_spec(spec);
    auto d = std::make_shared<LayerData>();
    d->spec = spec;
    d->tensor_name = weights.name;
    d->w.resize(weights.rows, weights.cols);
    for (std::int64_t i = 0; i < weights.rows; ++i)
        for (std::int64_t j = 0; j < weights.cols; ++j) {
            const float v = weights.values[static_cast<std::size_t>(i * weights.cols + j)];
            if (!std::isfinite(v)) throw Error("tensor '" + weights.name + "'", "holds a non-finite value");
            d->w(i, j) = v;
        }
    if (activations) {
        const std::int64_t k = weights.cols;
        d->x_calibration.resize(spec.calibration_tokens, k);
        d->x_heldout.resize(spec.heldout_tokens, k);
        for (std::int64_t t = 0; t < activations->rows; ++t)
            for (std::int64_t j = 0; j < k; ++j) {
                const float v = activations->values[static_cast<std::size_t>(t * k + j)];
                if (!std::isfinite(v)) throw Error("activations '" + activations->name + "'", "holds a non-finite value");
                if (t < spec.calibration_tokens) d->x_calibration(t, j) = v;
                else d->x_heldout(t - spec.calibration_tokens, j) = v;
            }
        // The loud channels of supplied activations: RMS above 6x the median channel RMS
        // (LLM.int8()'s threshold is 6.0 in absolute terms on unit-scale hidden states).
        std::vector<double> rms(static_cast<std::size_t>(k));
        for (std::int64_t j = 0; j < k; ++j) rms[static_cast<std::size_t>(j)] = std::sqrt(d->x_calibration.col(j).cast<double>().squaredNorm() / static_cast<double>(spec.calibration_tokens));
        std::vector<double> sorted = rms;
        std::nth_element(sorted.begin(), sorted.begin() + k / 2, sorted.end());
        const double median = sorted[static_cast<std::size_t>(k / 2)];
        d->is_outlier.assign(static_cast<std::size_t>(k), false);
        for (std::int64_t j = 0; j < k; ++j)
            if (rms[static_cast<std::size_t>(j)] > 6.0 * median) {
                d->is_outlier[static_cast<std::size_t>(j)] = true;
                d->outlier_channels.push_back(j);
            }
        d->spec.outlier_channels = static_cast<std::int64_t>(d->outlier_channels.size());
    } else {
        generate_activations(spec, *d);
    }
    finish_layer(*d);
    return Layer(std::move(d));
}

Layer with_outlier_magnitude(const Layer& layer, double magnitude) {
    LayerSpec spec = layer.spec();
    spec.outlier_magnitude = magnitude;
    validate_layer_spec(spec);
    const LayerData& src = layer.data();
    auto d = std::make_shared<LayerData>(src);
    d->spec = spec;
    const std::size_t outliers = d->outlier_channels.size();
    const std::int64_t t_cal = d->x_calibration.rows();
    for (std::int64_t t = 0; t < t_cal + d->x_heldout.rows(); ++t) {
        MatrixF& x = t < t_cal ? d->x_calibration : d->x_heldout;
        const std::int64_t row = t < t_cal ? t : t - t_cal;
        for (std::size_t i = 0; i < outliers; ++i) {
            const double v = magnitude * d->outlier_unit[static_cast<std::size_t>(t) * outliers + i];
            x(row, d->outlier_channels[i]) = static_cast<float>(d->token_loudness[static_cast<std::size_t>(t)] * v);
        }
    }
    finish_layer(*d);
    return Layer(std::move(d));
}

Layer LayerCache::get(const LayerSpec& spec) {
    Layer base;
    {
        const std::lock_guard<std::mutex> lock(mutex_);
        if (spec_ && *spec_ == spec) return layer_;
        if (spec_ && layer_.tensor_name().empty()) {
            LayerSpec other = *spec_;
            other.outlier_magnitude = spec.outlier_magnitude;
            if (other == spec) base = layer_;  // only the magnitude moved (the GUI's slider)
        }
    }
    Layer fresh = base.empty() ? generate_layer(spec) : with_outlier_magnitude(base, spec.outlier_magnitude);
    const std::lock_guard<std::mutex> lock(mutex_);
    spec_ = spec;
    layer_ = fresh;
    return fresh;
}

const LayerSpec& Layer::spec() const { return data_->spec; }
const std::string& Layer::tensor_name() const { return data_->tensor_name; }

}  // namespace quantplan::errorsim
