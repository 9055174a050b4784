#pragma once
// Sweeps of a priced plan over batch and context: the data behind the crossover chart and
// sweeps.csv. The GUI and the report draw these points; they never recompute the roofline.
#include <cstdint>
#include <string>
#include <vector>

#include "core/plan/plan.h"

namespace quantplan {

// One scheme at one (batch, context).
struct SweepPoint {
    std::string scheme;
    std::int64_t batch = 0;
    std::int64_t context_tokens = 0;
    double time_s = 0;                   // decode step time at this batch (whether admitted or not)
    double memory_time_s = 0;
    double compute_time_s = 0;
    double throughput_tokens_per_s = 0;  // batch / time_s
    Bound bound = Bound::Memory;
    bool admitted = false;               // batch <= max sequences at this context
    std::int64_t max_sequences = 0;      // admission at this context
    std::uint64_t bytes = 0;             // total bytes moved by the step
    // The step's band under an engine profile (SchemeBands' factors on time_s); 0 without one.
    double time_low_s = 0;
    double time_high_s = 0;
};

// Powers of two from `lo` to `hi` inclusive (1, 2, 4, ... 4096).
std::vector<std::int64_t> powers_of_two(std::int64_t lo, std::int64_t hi);

// Every scheme of `plan` at every batch of `batches`, at the plan's context. Points are grouped by
// scheme in plan order, batches ascending.
std::vector<SweepPoint> batch_sweep(const PlanResult& plan, const std::vector<std::int64_t>& batches);

// Every scheme x batch x context (for sweeps.csv), scheme-major, then context, then batch.
std::vector<SweepPoint> full_sweep(const PlanResult& plan, const std::vector<std::int64_t>& batches,
                                   const std::vector<std::int64_t>& contexts);

// sweeps.csv text: a header line, then one row per point, fixed formatting (deterministic).
std::string sweep_csv(const std::vector<SweepPoint>& points);

}  // namespace quantplan
