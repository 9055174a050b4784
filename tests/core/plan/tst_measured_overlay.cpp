// Measured decode steps (core/plan/measured_overlay.h): the roofline step with its decoder linears
// replaced by calibration times. Synthetic calibrations (tests/support/synthetic_calibration.h)
// whose kernels run exactly as predicted must land on the predicted step; slower kernels must
// move the point up by exactly the extra linear time; and every case the calibration cannot
// speak for (another GPU, TP > 1, MoE, schemes without a bundled kernel) gives a note, no point.
#include <algorithm>
#include <cmath>
#include <string>

#include <boost/test/unit_test.hpp>

#include "core/plan/measured_overlay.h"
#include "core/plan/plan.h"
#include "tests/core/test_support.h"
#include "tests/support/synthetic_calibration.h"

using namespace quantplan;
namespace tt = boost::test_tools;

namespace {

PlanResult make_plan(const char* model, const char* gpu, const char* schemes, const char* kernel = "fused", std::int64_t tp = 1) {
    PlanRequest r;
    r.model = test::bundled_model(model);
    r.gpu = test::bundled_gpu(gpu);
    r.efficiency = builtin_efficiency_profile("realistic");
    r.workload.batch = 8;
    r.workload.context_tokens = 4096;
    r.workload.kernel = parse_kernel_quality(kernel);
    r.workload.tensor_parallel = tp;
    r.schemes = parse_scheme_list(schemes);
    r.crossover_max_batch = 256;
    return plan(r);
}

bool has_note(const MeasuredOverlay& o, const std::string& part) {
    for (const std::string& n : o.notes)
        if (n.find(part) != std::string::npos) return true;
    return false;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(measured_overlay)

BOOST_AUTO_TEST_CASE(kernels_as_predicted_land_on_the_curve) {
    const PlanResult p = make_plan("qwen3-8b", "h100-sxm", "bf16,w4a16-g128,w8a8-fp8,w8a8-int8");
    const Calibration c = test::synthetic_calibration(p.request.model, p.request.gpu, p.request.efficiency);
    const MeasuredOverlay o = measured_step_points(c, p);
    BOOST_TEST(o.notes.empty());
    BOOST_TEST(o.points.size() == 4u * 13u);  // four schemes x batches 1..4096
    for (const MeasuredStepPoint& pt : o.points) {
        BOOST_TEST(pt.measured_step_s == pt.predicted_step_s, tt::tolerance(1e-12));
        BOOST_TEST(pt.linear_measured_s == pt.linear_predicted_s, tt::tolerance(1e-12));
        BOOST_TEST(pt.linear_predicted_s > 0.0);
        BOOST_TEST(pt.linear_predicted_s <= pt.predicted_step_s * 1.05);  // linears are most of the step, never much more
        BOOST_TEST(pt.context_tokens == 4096);
    }
    BOOST_TEST(median_abs_relative_error(o.points) == 0.0, tt::tolerance(1e-12));
    BOOST_TEST(o.points.front().scheme == "bf16");
    BOOST_TEST(o.points.front().kernel == "gemm_bf16");
    BOOST_TEST(o.points.front().batch == 1);
    BOOST_TEST(o.points[13].kernel == "w4a16_fused");
    BOOST_TEST(o.points[26].kernel == "w8a8_fp8");
    BOOST_TEST(o.points[39].kernel == "w8a8_int8");
    // bf16 at batch 1 is memory-bound: its linears read the 16-bit decoder weights once.
    const double decoder_weight_bytes = 2.0 * 36 * (4096.0 * 6144 + 4096.0 * 4096 + 2 * 12288.0 * 4096 + 4096.0 * 12288);
    const double bw = p.request.gpu.memory_bandwidth_bytes_per_s * p.request.efficiency.bandwidth_efficiency;
    BOOST_TEST(o.points.front().linear_predicted_s == decoder_weight_bytes / bw, tt::tolerance(0.01));
}

BOOST_AUTO_TEST_CASE(slower_kernels_raise_the_point_by_the_extra_linear_time) {
    const PlanResult p = make_plan("qwen3-8b", "h100-sxm", "bf16,w4a16-g128");
    const Calibration c = test::synthetic_calibration(p.request.model, p.request.gpu, p.request.efficiency, {{"w4a16_fused", 1.5}});
    const MeasuredOverlay o = measured_step_points(c, p);
    for (const MeasuredStepPoint& pt : o.points) {
        if (pt.scheme == "bf16") {
            BOOST_TEST(pt.relative_error() == 0.0, tt::tolerance(1e-12));
            continue;
        }
        BOOST_TEST(pt.linear_measured_s == 1.5 * pt.linear_predicted_s, tt::tolerance(1e-12));
        BOOST_TEST(pt.measured_step_s == pt.predicted_step_s + 0.5 * pt.linear_predicted_s, tt::tolerance(1e-12));
        BOOST_TEST(pt.relative_error() < 0.0);  // the plan is optimistic
    }
    BOOST_TEST(median_abs_relative_error(o.points) > 0.0);
}

BOOST_AUTO_TEST_CASE(the_generic_kernel_reads_the_generic_timings) {
    const PlanResult p = make_plan("qwen3-8b", "h100-sxm", "w4a16-g128", "generic");
    const Calibration c = test::synthetic_calibration(p.request.model, p.request.gpu, p.request.efficiency);
    const MeasuredOverlay o = measured_step_points(c, p);
    BOOST_TEST_REQUIRE(!o.points.empty());
    BOOST_TEST(o.points.front().kernel == "w4a16_generic");
}

BOOST_AUTO_TEST_CASE(int4_layouts_other_than_the_timed_one_are_noted) {
    const PlanResult p = make_plan("qwen3-8b", "h100-sxm", "w4a16-g128,w4a16-g32,w4a16-g128-sym,w4a16-ch");
    const Calibration c = test::synthetic_calibration(p.request.model, p.request.gpu, p.request.efficiency);
    const MeasuredOverlay o = measured_step_points(c, p);
    BOOST_TEST(o.points.size() == 4u * 13u);  // all four priced from the same timings
    BOOST_TEST(o.notes.size() == 2u);
    BOOST_TEST(has_note(o, "w4a16-g32: priced from w4a16_fused timed at group 128"));
    BOOST_TEST(has_note(o, "w4a16-ch: priced from"));
    BOOST_TEST(!has_note(o, "w4a16-g128"));
}

BOOST_AUTO_TEST_CASE(admission_is_carried_over) {
    const PlanResult p = make_plan("qwen3-8b", "h100-sxm", "bf16");
    const Calibration c = test::synthetic_calibration(p.request.model, p.request.gpu, p.request.efficiency);
    const MeasuredOverlay o = measured_step_points(c, p);
    const std::int64_t max_seq = p.schemes.front().admission.max_sequences;
    BOOST_TEST_REQUIRE(max_seq < 4096);
    for (const MeasuredStepPoint& pt : o.points) BOOST_TEST(pt.admitted == (pt.batch <= max_seq));
}

BOOST_AUTO_TEST_CASE(cases_the_calibration_cannot_speak_for) {
    const PlanResult h100 = make_plan("qwen3-8b", "h100-sxm", "bf16,w8a16,w4a4-nvfp4");
    Calibration c = test::synthetic_calibration(h100.request.model, h100.request.gpu, h100.request.efficiency);
    MeasuredOverlay o = measured_step_points(c, h100);
    BOOST_TEST(o.points.size() == 13u);  // bf16 only
    BOOST_TEST(has_note(o, "w8a16-int8: no bundled kernel"));

    const PlanResult h200 = make_plan("qwen3-8b", "h200", "bf16");
    o = measured_step_points(c, h200);
    BOOST_TEST(o.points.empty());
    BOOST_TEST(has_note(o, "calibration measured on h100-sxm"));

    const PlanResult tp2 = make_plan("qwen3-8b", "h100-sxm", "bf16", "fused", 2);
    o = measured_step_points(c, tp2);
    BOOST_TEST(o.points.empty());
    BOOST_TEST(has_note(o, "over 2 GPUs"));

    const PlanResult moe = make_plan("qwen3-30b-a3b", "h100-sxm", "bf16");
    o = measured_step_points(test::synthetic_calibration(moe.request.model, moe.request.gpu, moe.request.efficiency), moe);
    BOOST_TEST(o.points.empty());
    BOOST_TEST(has_note(o, "mixture of experts"));

    // Another model's shapes: nothing matches, one note per scheme.
    const PlanResult llama = make_plan("llama-3.1-8b", "h100-sxm", "bf16");
    c.measurements.erase(std::remove_if(c.measurements.begin(), c.measurements.end(), [](const KernelMeasurement& m) { return m.shape == "down_proj"; }),
                         c.measurements.end());
    o = measured_step_points(c, llama);
    BOOST_TEST(o.points.empty());
    BOOST_TEST(has_note(o, "bf16: the calibration holds no batch"));
}

BOOST_AUTO_TEST_SUITE_END()
