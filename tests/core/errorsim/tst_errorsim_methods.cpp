// The error lab's methods: GPTQ against a line-by-line transcription of the reference gptq.py in
// double precision, AWQ's search, SmoothQuant's formula, the run's readouts, the
// KV-cache lab and every configuration error.
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <Eigen/Cholesky>
#include <Eigen/LU>
#include <cmath>

#include "core/base/error.h"
#include "core/errorsim/error_lab.h"
#include "core/errorsim/gptq.h"
#include "core/errorsim/layer_data.h"
#include "core/errorsim/methods.h"
#include "core/errorsim/rng.h"

using namespace quantplan;
using namespace quantplan::errorsim;
namespace bdata = boost::unit_test::data;

namespace {

using MatrixD = Eigen::MatrixXd;

// GPTQ transcribed line by line from the reference implementation (IST-DASLab/gptq, gptq.py,
// fasterquant) in double precision: Hinv = upper Cholesky factor of the dampened inverse; blocks
// of `block` columns with an in-block copy W1; a group's scale fitted from W (previous blocks'
// updates only) at its first column; W[:, i2:] -= Err1 Hinv[i1:i2, i2:] after each block.
MatrixF reference_gptq(const Grid& grid, const ScaleLayout& layout, const MatrixF& w0, const MatrixF& h, double damp, std::int64_t block,
                       bool dynamic) {
    const Eigen::Index n = w0.rows(), k = w0.cols();
    MatrixD hd = h.cast<double>();
    hd.diagonal().array() += damp * hd.diagonal().mean();
    const MatrixD hinv = Eigen::LLT<MatrixD>(MatrixD(hd.inverse())).matrixU();
    MatrixD w = w0.cast<double>();
    MatrixF q_out(n, k);
    std::vector<GroupParams> params = fit_matrix(grid, layout, w0);
    const double s2 = second_level_scale(grid, std::max(-static_cast<double>(w0.minCoeff()), static_cast<double>(w0.maxCoeff())));
    for (Eigen::Index i1 = 0; i1 < k; i1 += block) {
        const Eigen::Index i2 = std::min<Eigen::Index>(i1 + block, k), count = i2 - i1;
        MatrixD w1 = w.middleCols(i1, count);
        MatrixD err1 = MatrixD::Zero(n, count);
        for (Eigen::Index i = 0; i < count; ++i) {
            const Eigen::Index col = i1 + i;
            if (dynamic && col % layout.group_cols == 0) {
                const Eigen::Index width = std::min<Eigen::Index>(layout.group_cols, k - col);
                for (Eigen::Index r = 0; r < n; ++r) {
                    // find_params(W[:, col:col+groupsize]): W as of the block start.
                    const MatrixF g = w.block(r, col, 1, width).cast<float>();
                    params[static_cast<std::size_t>(layout.index(r, col))] =
                        fit_group(grid, std::min(0.0f, g.minCoeff()), std::max(0.0f, g.maxCoeff()), s2);
                }
            }
            const double d = hinv(col, col);
            for (Eigen::Index r = 0; r < n; ++r) {
                const double q = quantize_value(grid, params[static_cast<std::size_t>(layout.index(r, col))], static_cast<float>(w1(r, i)), nullptr);
                q_out(r, col) = static_cast<float>(q);
                err1(r, i) = (w1(r, i) - q) / d;
            }
            w1.rightCols(count - i) -= err1.col(i) * hinv.row(col).segment(col, count - i);
        }
        w.rightCols(k - i2) -= err1 * hinv.block(i1, i2, count, k - i2);
    }
    return q_out;
}

// A small correlated problem: W 16 x 96, X 400 x 96 with a decaying spectrum.
struct Problem {
    MatrixF w, x, h;
};
Problem small_problem(std::uint64_t seed) {
    LayerSpec s;
    s.out_features = 16;
    s.in_features = 96;
    s.calibration_tokens = 400;
    s.heldout_tokens = 8;
    s.seed = seed;
    const Layer l = generate_layer(s);
    return {l.data().w, l.data().x_calibration, l.data().hessian};
}

double calibration_error(const Problem& p, const MatrixF& q) {
    return std::sqrt(hessian_error2(q - p.w, p.h) / hessian_error2(p.w, p.h));
}

struct GptqCase {
    const char* name;
    GroupShape group;
    std::int64_t block;
};
std::ostream& operator<<(std::ostream& os, const GptqCase& c) { return os << c.name; }
const GptqCase kGptqCases[] = {
    {"per-channel, blocks of 128", GroupShape::per_row(), 128}, {"per-channel, blocks of 1", GroupShape::per_row(), 1},
    {"per-channel, blocks of 7", GroupShape::per_row(), 7},     {"g32, blocks of 128", GroupShape::per_group(32), 128},
    {"g32, blocks of 20", GroupShape::per_group(32), 20},       {"g40 (not dividing 96), blocks of 64", GroupShape::per_group(40), 64},
    {"per-tensor", GroupShape::per_tensor(), 32},
};

// float GPTQ against the double reference: a rounding decision may flip where a value sits within
// float noise of a grid midpoint (and the flip then propagates), so codes must agree on 98% of
// weights and the calibration errors within 3% of each other.
constexpr double kCodeAgreement = 0.98;
constexpr double kErrorAgreement = 0.03;

}  // namespace

BOOST_AUTO_TEST_SUITE(errorsim_gptq)

BOOST_DATA_TEST_CASE(matches_the_textbook_algorithm, bdata::make(kGptqCases), c) {
    const Problem p = small_problem(11);
    const Grid grid = make_grid(DType::Int4, false, DType::Fp16, "w");
    const ScaleLayout layout = make_layout(c.group, p.w.rows(), p.w.cols(), "g");
    GptqOptions opt;
    opt.block_size = c.block;
    const GptqOutcome fast = gptq_quantize(grid, layout, p.w, p.h, {}, opt);
    const MatrixF ref = reference_gptq(grid, layout, p.w, p.h, opt.dampening, c.block, fast.dynamic_groups);
    const double same = (fast.dequantized.array() == ref.array()).cast<double>().mean();
    const double e_fast = calibration_error(p, fast.dequantized), e_ref = calibration_error(p, ref);
    BOOST_TEST_MESSAGE(c.name << ": codes agree on " << same << ", calibration error " << e_fast << " vs reference " << e_ref);
    BOOST_TEST(same >= kCodeAgreement);
    BOOST_TEST(std::fabs(e_fast - e_ref) <= kErrorAgreement * e_ref);
    BOOST_TEST(fast.dynamic_groups == (c.group.is_per_group() && c.group.cols < p.w.cols()));
}

BOOST_AUTO_TEST_CASE(lowers_calibration_error_and_raises_weight_error) {
    for (std::uint64_t seed : {1, 2, 3}) {
        const Problem p = small_problem(seed);
        const Grid grid = make_grid(DType::Int4, false, DType::Fp16, "w");
        const ScaleLayout layout = make_layout(GroupShape::per_group(32), p.w.rows(), p.w.cols(), "g");
        MatrixF rtn;
        quantize_matrix(grid, layout, fit_matrix(grid, layout, p.w), p.w, rtn, nullptr);
        const MatrixF g = gptq_quantize(grid, layout, p.w, p.h, {}, GptqOptions{}).dequantized;
        BOOST_TEST_CONTEXT("seed " << seed) {
            BOOST_TEST(calibration_error(p, g) < calibration_error(p, rtn));
            BOOST_TEST((g - p.w).norm() > (rtn - p.w).norm());
        }
    }
}

BOOST_AUTO_TEST_CASE(act_order_and_input_scale_and_dead_columns) {
    Problem p = small_problem(5);
    // A dead input channel (never active): GPTQ zeroes its weights and still factors H.
    p.h.row(3).setZero();
    p.h.col(3).setZero();
    const Grid grid = make_grid(DType::Int4, true, DType::Fp16, "w");
    const ScaleLayout layout = make_layout(GroupShape::per_row(), p.w.rows(), p.w.cols(), "g");
    GptqOptions opt;
    opt.act_order = true;
    const GptqOutcome out = gptq_quantize(grid, layout, p.w, p.h, {}, opt);
    BOOST_TEST(out.dequantized.col(3).isZero());
    BOOST_TEST(!out.dynamic_groups);
    // Scaling column j of W by s_j and passing s: the same problem in the scaled space, so the
    // result divided by s matches GPTQ run on W with H (up to float rounding of the scaled values).
    const Problem q = small_problem(6);
    std::vector<double> s(static_cast<std::size_t>(q.w.cols()), 2.0);  // a power of two: exact
    const MatrixF ws = scale_columns(q.w, s);
    const MatrixF a = gptq_quantize(grid, layout, ws, q.h, s, GptqOptions{}).dequantized / 2.0f;
    const MatrixF b = gptq_quantize(grid, layout, q.w, q.h, {}, GptqOptions{}).dequantized;
    BOOST_TEST((a - b).cwiseAbs().maxCoeff() <= 1e-6f * b.cwiseAbs().maxCoeff());
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(errorsim_scaling_methods)

BOOST_AUTO_TEST_CASE(awq_never_loses_to_round_to_nearest_on_its_objective) {
    for (std::uint64_t seed : {1, 2, 3, 4}) {
        LayerSpec s;
        s.seed = seed;
        const Layer layer = generate_layer(s);
        const Grid grid = make_grid(DType::Int4, false, DType::Fp16, "w");
        const ScaleLayout layout = make_layout(GroupShape::per_group(128), 32, 256, "g");
        const AwqOutcome awq = awq_search(layer.data(), grid, layout, 20, false);
        BOOST_TEST_CONTEXT("seed " << seed << " alpha " << awq.alpha) {
            BOOST_TEST(awq.loss_best <= awq.loss_rtn);  // alpha = 0 is plain round to nearest
            BOOST_TEST(awq.alpha >= 0.0);
            BOOST_TEST(awq.alpha < 1.0);
            const auto [mn, mx] = std::minmax_element(awq.scale.begin(), awq.scale.end());
            BOOST_TEST(*mn * *mx == 1.0, boost::test_tools::tolerance(1e-9));  // normalised
            // The loud channels get the largest scales.
            for (std::int64_t j : layer.data().outlier_channels)
                BOOST_TEST(awq.scale[static_cast<std::size_t>(j)] >= *mx * 0.5);
        }
    }
}

BOOST_AUTO_TEST_CASE(smoothquant_scales_follow_the_formula) {
    const Layer layer = generate_layer(LayerSpec{});
    const auto& d = layer.data();
    for (double alpha : {0.0, 0.5, 0.85}) {
        const std::vector<double> s = smoothquant_scales(d, alpha);
        for (std::int64_t j : {0, 17, 255}) {
            const double wm = d.w.col(j).cwiseAbs().maxCoeff();
            const double expected = std::pow(d.max_abs_x[static_cast<std::size_t>(j)], alpha) / std::pow(wm, 1.0 - alpha);
            BOOST_TEST(s[static_cast<std::size_t>(j)] == expected, boost::test_tools::tolerance(1e-12));
        }
    }
}

BOOST_AUTO_TEST_CASE(run_readouts_are_consistent) {
    ErrorLabConfig c;
    const Layer layer = generate_layer(c.layer);
    const ErrorLabResult r = run_error_lab(c, layer);
    BOOST_TEST(r.effective_bits == 4.15625);
    BOOST_TEST(r.median_levels_per_group == 16.0);  // asymmetric g128: min and max land on codes 0 and 15
    BOOST_TEST(r.median_levels_activation_channel == 0.0);
    BOOST_TEST(r.weight_spread_before == r.weight_spread_after);
    BOOST_TEST(!r.awq_alpha);
    BOOST_TEST(r.log.size() >= 5u);
    // Calibration error from the outputs equals the Hessian form tr(D H D^T) (16-bit activations).
    BOOST_TEST(r.layer_error_calibration > 0.01);
    BOOST_TEST(r.layer_error_calibration < 0.5);
    // The same call twice gives the same numbers; a fresh layer of the same spec too.
    const ErrorLabResult again = run_error_lab(c);
    BOOST_TEST(again.layer_error_calibration == r.layer_error_calibration);
    BOOST_TEST(again.layer_error_heldout == r.layer_error_heldout);
    // Finer grids lose less: int8 per-channel far below int4.
    c.weights.format = DType::Int8;
    c.weights.symmetric = true;
    BOOST_TEST(run_error_lab(c, layer).layer_error_calibration < r.layer_error_calibration / 5);
}

BOOST_AUTO_TEST_CASE(per_tensor_int4_spans_fewer_levels_per_row) {
    ErrorLabConfig c;
    c.weights.group = GroupShape::per_tensor();
    const ErrorLabResult r = run_error_lab(c);
    // One scale set by the largest weight of the matrix: the median row uses a fraction of the 16.
    BOOST_TEST(r.median_levels_per_group < 16.0);
    BOOST_TEST(r.median_levels_per_group >= 2.0);
}

BOOST_AUTO_TEST_CASE(layer_cache_reuses_until_the_spec_changes) {
    LayerCache cache;
    LayerSpec s;
    const Layer a = cache.get(s);
    const Layer b = cache.get(s);
    BOOST_TEST(&a.data() == &b.data());
    s.outlier_magnitude = 100.0;
    const Layer c = cache.get(s);
    BOOST_TEST(&a.data() != &c.data());
    BOOST_TEST(c.spec().outlier_magnitude == 100.0);
    // Only the magnitude moved: the cache rebuilt the outlier columns instead of regenerating, and
    // the result is bit-identical to a fresh generation.
    const Layer fresh = generate_layer(s);
    BOOST_TEST((c.data().x_calibration.array() == fresh.data().x_calibration.array()).all());
    BOOST_TEST((c.data().x_heldout.array() == fresh.data().x_heldout.array()).all());
    BOOST_TEST((c.data().hessian.array() == fresh.data().hessian.array()).all());
    BOOST_TEST((c.data().y_heldout.array() == fresh.data().y_heldout.array()).all());
    BOOST_TEST(c.data().max_abs_x == fresh.data().max_abs_x);
    ErrorLabConfig cfg;
    cfg.layer = s;
    BOOST_TEST(run_error_lab(cfg, c).layer_error_heldout == run_error_lab(cfg, fresh).layer_error_heldout);
}

BOOST_AUTO_TEST_CASE(ladder_has_the_seed_rungs) {
    const std::vector<LadderRow> rows = granularity_ladder(ErrorLabConfig{});
    BOOST_TEST_REQUIRE(rows.size() == 5u);
    const char* names[] = {"per-tensor", "per-channel", "g128", "g64", "g32"};
    for (std::size_t i = 0; i < rows.size(); ++i) BOOST_TEST(rows[i].granularity == names[i]);
    BOOST_TEST(rows[4].result.effective_bits == 4.625);
}

BOOST_AUTO_TEST_CASE(kv_cache_lab) {
    KvLabConfig c;
    const KvLabResult fp8_tensor = run_kv_lab(c);
    c.format = DType::Int8;
    const KvLabResult int8_tensor = run_kv_lab(c);
    c.per_token_head = true;
    const KvLabResult int8_head = run_kv_lab(c);
    c.format = DType::Int4;
    c.symmetric = false;
    const KvLabResult int4_head = run_kv_lab(c);
    BOOST_TEST_MESSAGE("KV: fp8 tensor " << fp8_tensor.relative_error << ", int8 tensor " << int8_tensor.relative_error << ", int8 token-head "
                                         << int8_head.relative_error << ", int4 token-head " << int4_head.relative_error);
    // Outlier channels set a per-tensor integer scale for everyone; FP8's exponent absorbs them,
    // and per-token-head scales narrow each group's range.
    BOOST_TEST(fp8_tensor.relative_error < int8_tensor.relative_error);
    BOOST_TEST(int8_head.relative_error < int8_tensor.relative_error);
    BOOST_TEST(int4_head.relative_error > int8_head.relative_error);
    BOOST_TEST(int8_head.effective_bits == 8.0 + 16.0 / 128);
    BOOST_TEST(int4_head.effective_bits == 4.0 + 32.0 / 128);  // fp16 scale and fp16 zero, as core/scheme/scheme.h
    BOOST_TEST(int8_tensor.median_levels_channel < int8_head.median_levels_channel);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(errorsim_configuration_errors)

struct BadConfig {
    const char* what;
    const char* field;
    ErrorLabConfig config;
};
std::ostream& operator<<(std::ostream& os, const BadConfig& b) { return os << b.what; }

std::vector<BadConfig> bad_configs() {
    std::vector<BadConfig> v;
    auto add = [&](const char* what, const char* field, auto mutate) {
        ErrorLabConfig c;
        c.layer.out_features = 8;
        c.layer.in_features = 64;
        c.layer.calibration_tokens = 80;
        c.layer.heldout_tokens = 8;
        mutate(c);
        v.push_back({what, field, c});
    };
    add("group size 0", "weights.group", [](ErrorLabConfig& c) { c.weights.group = GroupShape::per_group(0); });
    add("group size -3", "weights.group", [](ErrorLabConfig& c) { c.weights.group = GroupShape::per_group(-3); });
    add("asymmetric fp8", "weights.format", [](ErrorLabConfig& c) { c.weights.format = DType::Fp8E4M3; });
    add("bf16 payload", "weights.format", [](ErrorLabConfig& c) { c.weights.format = DType::Bf16; });
    add("int32 payload", "weights.format", [](ErrorLabConfig& c) { c.weights.format = DType::Int32; });
    add("AWQ and SmoothQuant", "methods", [](ErrorLabConfig& c) { c.methods.awq = c.methods.smoothquant = true; });
    add("alpha 1.5", "methods.smoothquant_alpha", [](ErrorLabConfig& c) { c.methods.smoothquant_alpha = 1.5; });
    add("dampening 0", "methods.gptq_dampening", [](ErrorLabConfig& c) { c.methods.gptq_dampening = 0.0; });
    add("block 0", "methods.gptq_block_size", [](ErrorLabConfig& c) { c.methods.gptq_block_size = 0; });
    add("static per-token activations", "activations.is_static", [](ErrorLabConfig& c) {
        c.activations.format = DType::Int8;
        c.activations.is_static = true;
    });
    add("bf16 activations", "activations.format", [](ErrorLabConfig& c) { c.activations.format = DType::Bf16; });
    add("no outputs", "layer.out_features", [](ErrorLabConfig& c) { c.layer.out_features = 0; });
    add("more outliers than channels", "layer.outlier_channels", [](ErrorLabConfig& c) { c.layer.outlier_channels = 65; });
    add("NaN magnitude", "layer.outlier_magnitude", [](ErrorLabConfig& c) { c.layer.outlier_magnitude = std::nan(""); });
    add("huge K", "layer.in_features", [](ErrorLabConfig& c) { c.layer.in_features = 1 << 20; });
    add("huge N", "layer.out_features", [](ErrorLabConfig& c) { c.layer.out_features = std::int64_t{1} << 40; });
    return v;
}

BOOST_DATA_TEST_CASE(refused_with_the_field_named, bdata::make(bad_configs()), b) {
    std::string field = "no error";
    try {
        run_error_lab(b.config);
    } catch (const Error& e) {
        field = e.field();
        BOOST_TEST_MESSAGE(e.what());
    }
    BOOST_TEST(field == b.field);
}

BOOST_AUTO_TEST_SUITE_END()
