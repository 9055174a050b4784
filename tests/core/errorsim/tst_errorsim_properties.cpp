// Seed 003's findings as properties of the error lab over 20 seeds (medians, never one seed's
// numbers): the granularity ladders, GPTQ, SmoothQuant, FP8 against INT8 activations, FP8 weights
// across granularities and AWQ composed with GPTQ. docs/errorsim.md compares the medians with the
// seed's own figures.
#include <boost/test/unit_test.hpp>
#include <algorithm>
#include <vector>

#include "core/errorsim/error_lab.h"

using namespace quantplan;
using namespace quantplan::errorsim;

namespace {

// Seeds 1..20: the "at least 20 seeds".
constexpr int kSeeds = 20;

// "Per-tensor near twice per-channel" (seed 003: 27.73% / 14.16% = 1.96): accepted band.
constexpr double kPerTensorOverChannelMin = 1.5;
constexpr double kPerTensorOverChannelMax = 3.0;
// "An order of magnitude lower" (seed 003: 1.61/27.73 ... 0.489/10.16, ratios 17 to 21).
constexpr double kInt8OverInt4Max = 0.1;
// "FP8 weights barely care about granularity" (seed 003: 2.37% to 2.75%, a spread of 14% of the
// largest): the FP8 ladder's (max - min) / max stays below this, while INT4's exceeds the next.
constexpr double kFlatLadderMax = 0.25;
constexpr double kSteepLadderMin = 0.5;

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Every median the properties read, computed once for the whole suite.
struct Medians {
    std::vector<double> int4, int8, fp8;  // ladders: per-tensor, per-channel, g128, g64, g32
    double rtn_cal = 0, rtn_held = 0, rtn_weight = 0;
    double gptq_cal = 0, gptq_held = 0, gptq_weight = 0;
    double awq_cal = 0, awq_gptq_cal = 0;
    double uncorrelated_rtn_held = 0, uncorrelated_gptq_held = 0;
    double sq16_weight = 0, spread_before = 0, spread_after = 0;
    double w8_int8 = 0, w8_fp8 = 0;
    double a8_int8_20 = 0, a8_int8_sq_20 = 0, a8_fp8_20 = 0, a8_int8_100 = 0, a8_fp8_100 = 0;
};

std::vector<double> ladder(const ErrorLabConfig& c, const Layer& l) {
    std::vector<double> out;
    for (const LadderRow& r : granularity_ladder(c, l)) out.push_back(r.result.layer_error_calibration);
    return out;
}

const Medians& medians() {
    static const Medians m = [] {
        std::vector<std::vector<double>> i4(5), i8(5), f8(5);
        std::vector<std::vector<double>> v(20);
        for (int seed = 1; seed <= kSeeds; ++seed) {
            ErrorLabConfig base;  // INT4 asymmetric g128, 16-bit activations, 20x outliers
            base.layer.seed = static_cast<std::uint64_t>(seed);
            const Layer layer = generate_layer(base.layer);
            ErrorLabConfig c = base;
            const auto l4 = ladder(c, layer);
            c.weights.format = DType::Int8;
            c.weights.symmetric = true;
            const auto l8 = ladder(c, layer);
            c.weights.format = DType::Fp8E4M3;
            const auto lf = ladder(c, layer);
            for (int i = 0; i < 5; ++i) {
                i4[static_cast<std::size_t>(i)].push_back(l4[static_cast<std::size_t>(i)]);
                i8[static_cast<std::size_t>(i)].push_back(l8[static_cast<std::size_t>(i)]);
                f8[static_cast<std::size_t>(i)].push_back(lf[static_cast<std::size_t>(i)]);
            }
            const ErrorLabResult rtn = run_error_lab(base, layer);
            ErrorLabConfig g = base;
            g.methods.gptq = true;
            const ErrorLabResult gptq = run_error_lab(g, layer);
            ErrorLabConfig a = base;
            a.methods.awq = true;
            const ErrorLabResult awq = run_error_lab(a, layer);
            a.methods.gptq = true;
            const ErrorLabResult awq_gptq = run_error_lab(a, layer);
            ErrorLabConfig sq = base;
            sq.methods.smoothquant = true;
            const ErrorLabResult sq16 = run_error_lab(sq, layer);

            ErrorLabConfig u = base;
            u.layer.correlated_activations = false;
            const Layer uncorrelated = generate_layer(u.layer);
            const ErrorLabResult u_rtn = run_error_lab(u, uncorrelated);
            u.methods.gptq = true;
            const ErrorLabResult u_gptq = run_error_lab(u, uncorrelated);

            ErrorLabConfig w8 = base;  // INT8 per-channel weights: they contribute almost nothing
            w8.weights.format = DType::Int8;
            w8.weights.symmetric = true;
            w8.weights.group = GroupShape::per_row();
            ErrorLabConfig wf = w8;
            wf.weights.format = DType::Fp8E4M3;
            ErrorLabConfig a8 = w8;
            a8.activations.format = DType::Int8;  // per token, dynamic
            ErrorLabConfig a8sq = a8;
            a8sq.methods.smoothquant = true;
            ErrorLabConfig af = w8;
            af.activations.format = DType::Fp8E4M3;
            ErrorLabConfig loud = a8;
            loud.layer.outlier_magnitude = 100.0;
            const Layer layer100 = generate_layer(loud.layer);
            ErrorLabConfig loud_fp8 = af;
            loud_fp8.layer = loud.layer;

            const double row[] = {rtn.layer_error_calibration,      rtn.layer_error_heldout,
                                  rtn.weight_error,                 gptq.layer_error_calibration,
                                  gptq.layer_error_heldout,         gptq.weight_error,
                                  awq.layer_error_calibration,      awq_gptq.layer_error_calibration,
                                  u_rtn.layer_error_heldout,        u_gptq.layer_error_heldout,
                                  sq16.weight_error,                sq16.weight_spread_before,
                                  sq16.weight_spread_after,         run_error_lab(w8, layer).layer_error_calibration,
                                  run_error_lab(wf, layer).layer_error_calibration, run_error_lab(a8, layer).layer_error_calibration,
                                  run_error_lab(a8sq, layer).layer_error_calibration, run_error_lab(af, layer).layer_error_calibration,
                                  run_error_lab(loud, layer100).layer_error_calibration, run_error_lab(loud_fp8, layer100).layer_error_calibration};
            for (std::size_t i = 0; i < 20; ++i) v[i].push_back(row[i]);
        }
        Medians r;
        for (int i = 0; i < 5; ++i) {
            r.int4.push_back(median(i4[static_cast<std::size_t>(i)]));
            r.int8.push_back(median(i8[static_cast<std::size_t>(i)]));
            r.fp8.push_back(median(f8[static_cast<std::size_t>(i)]));
        }
        double* out[] = {&r.rtn_cal,     &r.rtn_held,     &r.rtn_weight,  &r.gptq_cal,   &r.gptq_held,     &r.gptq_weight,   &r.awq_cal,
                         &r.awq_gptq_cal, &r.uncorrelated_rtn_held, &r.uncorrelated_gptq_held, &r.sq16_weight, &r.spread_before, &r.spread_after,
                         &r.w8_int8,     &r.w8_fp8,       &r.a8_int8_20,  &r.a8_int8_sq_20, &r.a8_fp8_20,    &r.a8_int8_100,   &r.a8_fp8_100};
        for (std::size_t i = 0; i < 20; ++i) *out[i] = median(v[i]);
        return r;
    }();
    return m;
}

std::string percent_list(const std::vector<double>& v) {
    std::string s;
    for (double x : v) s += std::to_string(100.0 * x).substr(0, 6) + "% ";
    return s;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(errorsim_seed_findings)

BOOST_AUTO_TEST_CASE(int4_ladder_falls_per_tensor_channel_g128_g32) {
    const Medians& m = medians();
    BOOST_TEST_MESSAGE("INT4 ladder medians (per-tensor, per-channel, g128, g64, g32): " << percent_list(m.int4)
                                                                                         << "; seed 003: 27.73% 14.16% 12.76% - 10.16%");
    for (std::size_t i = 0; i + 1 < m.int4.size(); ++i) BOOST_TEST(m.int4[i] > m.int4[i + 1], "rung " << i << " above rung " << i + 1);
    const double ratio = m.int4[0] / m.int4[1];
    BOOST_TEST_MESSAGE("per-tensor / per-channel " << ratio << ", accepted [" << kPerTensorOverChannelMin << ", " << kPerTensorOverChannelMax << "]");
    BOOST_TEST(ratio >= kPerTensorOverChannelMin);
    BOOST_TEST(ratio <= kPerTensorOverChannelMax);
}

BOOST_AUTO_TEST_CASE(int8_ladder_sits_an_order_of_magnitude_lower) {
    const Medians& m = medians();
    BOOST_TEST_MESSAGE("INT8 ladder medians: " << percent_list(m.int8) << "; seed 003: 1.61% 0.846% 0.718% - 0.489%");
    for (std::size_t i = 0; i < m.int8.size(); ++i) BOOST_TEST(m.int8[i] <= kInt8OverInt4Max * m.int4[i], "rung " << i);
    BOOST_TEST(m.int8[0] > m.int8[1]);
    BOOST_TEST(m.int8[1] > m.int8[4]);
}

BOOST_AUTO_TEST_CASE(gptq_lowers_layer_error_and_raises_weight_error) {
    const Medians& m = medians();
    BOOST_TEST_MESSAGE("INT4 g128 RTN -> GPTQ: calibration " << m.rtn_cal << " -> " << m.gptq_cal << ", held-out " << m.rtn_held << " -> "
                                                           << m.gptq_held << ", weights " << m.rtn_weight << " -> " << m.gptq_weight
                                                           << "; seed 003: 12.76% -> 4.68%, weights 11.60% -> 24.45%");
    BOOST_TEST(m.gptq_cal < m.rtn_cal);
    BOOST_TEST(m.gptq_held < m.rtn_held);  // correlated activations: the Hessian generalises
    BOOST_TEST(m.gptq_weight > m.rtn_weight);
}

BOOST_AUTO_TEST_CASE(gptq_held_out_gain_needs_correlated_activations) {
    // With independent channels the calibration Hessian is mostly sampling noise: what GPTQ fits
    // there does not carry to new tokens.
    const Medians& m = medians();
    const double correlated_gain = (m.rtn_held - m.gptq_held) / m.rtn_held;
    const double independent_gain = (m.uncorrelated_rtn_held - m.uncorrelated_gptq_held) / m.uncorrelated_rtn_held;
    BOOST_TEST_MESSAGE("held-out gain: correlated " << correlated_gain << ", independent channels " << independent_gain);
    BOOST_TEST(independent_gain < 0.25 * correlated_gain);
}

BOOST_AUTO_TEST_CASE(smoothquant_with_16_bit_activations_moves_difficulty_into_the_weights) {
    const Medians& m = medians();
    BOOST_TEST_MESSAGE("SmoothQuant a16: weight error " << m.rtn_weight << " -> " << m.sq16_weight << ", spread " << m.spread_before << "x -> "
                                                        << m.spread_after << "x; seed 003: 11.60% -> 17.33%, 8.9x -> 12.8x");
    BOOST_TEST(m.sq16_weight > m.rtn_weight);
    BOOST_TEST(m.spread_after > m.spread_before);
}

BOOST_AUTO_TEST_CASE(smoothquant_pays_off_with_int8_per_token_activations) {
    const Medians& m = medians();
    BOOST_TEST_MESSAGE("W8A8 INT8 per-channel / per-token: " << m.a8_int8_20 << " -> SmoothQuant " << m.a8_int8_sq_20 << "; seed 003: 2.97% -> 0.877%");
    BOOST_TEST(m.a8_int8_sq_20 < m.a8_int8_20);
}

BOOST_AUTO_TEST_CASE(fp8_activations_beat_int8_and_the_gap_widens_with_outliers) {
    const Medians& m = medians();
    BOOST_TEST_MESSAGE("activations FP8 vs INT8 at 20x: " << m.a8_fp8_20 << " vs " << m.a8_int8_20 << "; at 100x: " << m.a8_fp8_100 << " vs "
                                                          << m.a8_int8_100 << "; seed 003: 1.92% vs 2.97%, 1.40% vs 3.26%");
    BOOST_TEST(m.a8_fp8_20 < m.a8_int8_20);
    BOOST_TEST(m.a8_fp8_100 < m.a8_int8_100);
    BOOST_TEST(m.a8_int8_100 - m.a8_fp8_100 > m.a8_int8_20 - m.a8_fp8_20);
}

BOOST_AUTO_TEST_CASE(fp8_weights_barely_care_about_granularity) {
    const Medians& m = medians();
    const auto flatness = [](const std::vector<double>& v) {
        const auto [mn, mx] = std::minmax_element(v.begin(), v.end());
        return (*mx - *mn) / *mx;
    };
    BOOST_TEST_MESSAGE("FP8 ladder medians: " << percent_list(m.fp8) << "; seed 003: 2.68% 2.65% 2.69% 2.75% 2.37%");
    BOOST_TEST(flatness(m.fp8) <= kFlatLadderMax);
    BOOST_TEST(flatness(m.int4) >= kSteepLadderMin);
}

BOOST_AUTO_TEST_CASE(per_channel_int8_weights_beat_per_channel_fp8) {
    const Medians& m = medians();
    BOOST_TEST_MESSAGE("per-channel weights, 16-bit activations: INT8 " << m.w8_int8 << ", FP8 " << m.w8_fp8 << "; seed 003: 0.846% vs 2.65%");
    BOOST_TEST(m.w8_int8 < m.w8_fp8);
}

BOOST_AUTO_TEST_CASE(awq_plus_gptq_beats_either_on_calibration_tokens) {
    const Medians& m = medians();
    BOOST_TEST_MESSAGE("INT4 g128 calibration: AWQ " << m.awq_cal << ", GPTQ " << m.gptq_cal << ", both " << m.awq_gptq_cal << "; seed 003: both 2.12%");
    BOOST_TEST(m.awq_gptq_cal < m.gptq_cal);
    BOOST_TEST(m.awq_gptq_cal < m.awq_cal);
}

BOOST_AUTO_TEST_SUITE_END()
