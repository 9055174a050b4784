#include "core/plan/sweep.h"

#include <cstdio>

namespace quantplan {
namespace {

void add_points(const PlanResult& plan, const SchemeResult& r, const Admission& adm, std::int64_t context,
                const std::vector<std::int64_t>& batches, std::vector<SweepPoint>& out) {
    const PlanRequest& q = plan.request;
    for (std::int64_t b : batches) {
        const DecodeStep s = priced_decode_step(q, r.costs, b, context);
        SweepPoint p;
        p.scheme = scheme_name(r.costs.scheme);
        p.batch = b;
        p.context_tokens = context;
        p.time_s = s.time_s;
        p.memory_time_s = s.memory_time_s;
        p.compute_time_s = s.compute_time_s;
        p.throughput_tokens_per_s = static_cast<double>(b) / s.time_s;
        p.bound = s.bound;
        p.max_sequences = adm.max_sequences;
        p.admitted = adm.fits && b <= adm.max_sequences;
        p.bytes = s.total_bytes();
        if (r.bands && r.bands->has_step) {
            p.time_low_s = s.time_s * r.bands->step_low_factor;
            p.time_high_s = s.time_s * r.bands->step_high_factor;
        }
        out.push_back(std::move(p));
    }
}

}  // namespace

std::vector<std::int64_t> powers_of_two(std::int64_t lo, std::int64_t hi) {
    std::vector<std::int64_t> out;
    for (std::int64_t v = 1; v <= hi; v *= 2)
        if (v >= lo) out.push_back(v);
    return out;
}

std::vector<SweepPoint> batch_sweep(const PlanResult& plan, const std::vector<std::int64_t>& batches) {
    std::vector<SweepPoint> out;
    out.reserve(plan.schemes.size() * batches.size());
    for (const SchemeResult& r : plan.schemes) add_points(plan, r, r.admission, plan.request.workload.context_tokens, batches, out);
    return out;
}

std::vector<SweepPoint> full_sweep(const PlanResult& plan, const std::vector<std::int64_t>& batches,
                                   const std::vector<std::int64_t>& contexts) {
    std::vector<SweepPoint> out;
    out.reserve(plan.schemes.size() * batches.size() * contexts.size());
    for (const SchemeResult& r : plan.schemes)
        for (std::int64_t l : contexts) {
            Workload w = plan.request.workload;
            w.context_tokens = l;
            const Admission adm = priced_admission(plan.request, r.costs, w);
            add_points(plan, r, adm, l, batches, out);
        }
    return out;
}

std::string sweep_csv(const std::vector<SweepPoint>& points) {
    std::string out = "scheme,batch,context,time_s,memory_time_s,compute_time_s,throughput_tokens_per_s,bound,admitted,max_sequences,bytes\n";
    char buf[512];
    for (const SweepPoint& p : points) {
        std::snprintf(buf, sizeof buf, "%s,%lld,%lld,%.9e,%.9e,%.9e,%.6f,%s,%d,%lld,%llu\n", p.scheme.c_str(),
                      static_cast<long long>(p.batch), static_cast<long long>(p.context_tokens), p.time_s, p.memory_time_s,
                      p.compute_time_s, p.throughput_tokens_per_s, bound_name(p.bound), p.admitted ? 1 : 0,
                      static_cast<long long>(p.max_sequences), static_cast<unsigned long long>(p.bytes));
        out += buf;
    }
    return out;
}

}  // namespace quantplan
