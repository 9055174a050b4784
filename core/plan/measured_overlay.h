#pragma once
// Measured decode steps: a plan's roofline step with its decoder linear layers replaced by what
// `quantplan --validate` timed on the GPU (docs/kernels.md, "Measured decode steps"). The crossover chart
// draws these as points over the predicted curves, and the report prints them next to the
// prediction with the error.
//
// For scheme S at batch B the calibration must hold S's kernel at B for each linear of a decoder
// block (qkv_proj, o_proj, gate_up_proj, down_proj, each counted even when two share a shape). Then
//   linear_measured  = layers x sum over shapes of the measured kernel time
//   linear_predicted = layers x sum over shapes of predict_kernel_time_s(measurement, plan GPU, plan profile)
//   measured_step    = linear_measured + max(0, predicted_step - linear_predicted)
// so everything the calibration did not time (attention, lm_head, embeddings, norms) stays the
// roofline's, priced with the plan's profile, and a point lies on its curve when the linear
// kernels ran as predicted. The roofline step is one max(memory, compute) over the whole step while
// linear_predicted sums each kernel's own max, so the difference can undercount the untimed part
// where some linears are compute-bound and the step is not; it is clamped at zero (the point then
// sits above its curve by the excess, even for kernels that ran as predicted).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/hardware/calibration.h"
#include "core/plan/plan.h"

namespace quantplan {

// One scheme at one batch, predicted and rebuilt from measured kernels.
struct MeasuredStepPoint {
    std::string scheme;
    std::string kernel;                 // calibration kernel that ran the scheme's linears
    std::int64_t batch = 0;
    std::int64_t context_tokens = 0;    // the plan's context
    double predicted_step_s = 0;        // the plan's roofline decode step at this batch
    double linear_predicted_s = 0;      // decoder linears, roofline (plan's GPU and profile)
    double linear_measured_s = 0;       // decoder linears, measured
    double measured_step_s = 0;         // see the header comment
    bool admitted = false;              // batch <= the scheme's max sequences at the plan's context

    // (predicted - measured) / measured: positive when the plan is pessimistic.
    double relative_error() const { return measured_step_s > 0 ? (predicted_step_s - measured_step_s) / measured_step_s : 0.0; }
};

// Every measured point of a plan, and why schemes (or the whole file) have none.
struct MeasuredOverlay {
    std::vector<MeasuredStepPoint> points;   // plan's scheme order, batches ascending
    std::vector<std::string> notes;          // one line each, e.g. "w8a16: no bundled kernel runs this scheme"
};

// The calibration kernel that runs a plan scheme's linear layers, or nullopt (with `why`) when no
// bundled kernel does: bf16/fp16 -> gemm_bf16; INT4 weight-only -> w4a16_fused (w4a16_generic with
// the generic kernel); W8A8 INT8 -> w8a8_int8; W8A8 FP8 -> w8a8_fp8 (on GPUs that run FP8).
std::optional<std::string> calibration_kernel_for(const SchemeCosts& costs, KernelQuality quality, std::string* why = nullptr);

// The measured points of `plan` (see the header comment). No points, with a note, when the
// calibration was measured on another GPU profile, when the plan splits the model over several
// GPUs (the timed shapes are whole), or for a mixture-of-experts model (expert GEMMs run at a
// per-expert batch the calibration does not hold).
MeasuredOverlay measured_step_points(const Calibration& calibration, const PlanResult& plan);

// The median |relative_error()| of `points` (0 for none).
double median_abs_relative_error(const std::vector<MeasuredStepPoint>& points);

}  // namespace quantplan
