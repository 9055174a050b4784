#include "core/roofline/decision.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/base/error.h"
#include "core/roofline/roofline.h"

namespace quantplan {
namespace {

std::string fixed(double v, int digits) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", digits, v);
    return buf;
}

int allowed_risk(AccuracyTolerance t) {
    switch (t) {
        case AccuracyTolerance::Strict: return 0;
        case AccuracyTolerance::Moderate: return 1;
        case AccuracyTolerance::Loose: return 2;
    }
    return 1;
}

const AccuracyEvidence* evidence_for(const std::string& cls) {
    for (const AccuracyEvidence& e : accuracy_evidence())
        if (e.scheme_class == cls) return &e;
    return nullptr;
}

}  // namespace

Goal parse_goal(std::string_view name) {
    if (name == "throughput") return Goal::Throughput;
    if (name == "latency") return Goal::Latency;
    throw Error("--goal", "unknown goal '" + std::string(name) + "' (throughput, latency)");
}

AccuracyTolerance parse_accuracy_tolerance(std::string_view name) {
    if (name == "strict") return AccuracyTolerance::Strict;
    if (name == "moderate") return AccuracyTolerance::Moderate;
    if (name == "loose") return AccuracyTolerance::Loose;
    throw Error("--accuracy", "unknown accuracy tolerance '" + std::string(name) + "' (strict, moderate, loose)");
}

const char* goal_name(Goal g) { return g == Goal::Throughput ? "throughput" : "latency"; }

const char* accuracy_tolerance_name(AccuracyTolerance t) {
    switch (t) {
        case AccuracyTolerance::Strict: return "strict";
        case AccuracyTolerance::Moderate: return "moderate";
        case AccuracyTolerance::Loose: return "loose";
    }
    return "moderate";
}

const std::vector<AccuracyEvidence>& accuracy_evidence() {
    static const std::vector<AccuracyEvidence> table{
        {"bf16", 0, "the unquantized baseline", "-"},
        {"w8a8-fp8", 0, "FP8 W8A8 is effectively lossless at every model scale in the Llama-3.1 family",
         "arXiv:2411.02355 (Give Me BF16 or Give Me Death?, ACL 2025)"},
        {"w8a16", 0, "8-bit weight-only keeps 16-bit activations; W8A8 and W4A16 are near-lossless",
         "arXiv:2504.04823 (Quantization Hurts Reasoning?, COLM 2025)"},
        {"w8a8-int8", 1, "well-tuned INT8 W8A8 shows 1-3% degradation", "arXiv:2411.02355"},
        {"w4a16", 1, "INT4 weight-only g128 is near-lossless (Llama-2-7B WikiText 5.47 -> 5.60 AWQ, 5.73 RTN) and more competitive than expected",
         "arXiv:2504.04823; arXiv:2411.02355; AWQ and GPTQ papers via seed 003"},
        {"nvfp4", 2, "4-bit activations are outside the cited studies: measure before serving", "not covered by arXiv:2411.02355 or 2504.04823"},
        {"mxfp4", 2, "FP4 weights with power-of-two scales are outside the cited studies: measure before serving", "not covered by arXiv:2411.02355 or 2504.04823"},
        {"sub4", 3, "below 4 bits degradation is severe and task-dependent (OPT-1.3B INT3 g128: perplexity 14.62 -> 119.47)",
         "arXiv:2504.04823; AWQ paper via seed 003"},
    };
    return table;
}

std::string accuracy_class(std::string_view name, int weight_bits) {
    const std::string n(name);
    if (n == "bf16" || n == "fp16" || n == "fp32") return "bf16";
    if (n.find("nvfp4") != std::string::npos) return "nvfp4";
    if (n.find("mxfp4") != std::string::npos) return "mxfp4";
    if (weight_bits < 4) return "sub4";
    if (n.find("fp8") != std::string::npos) return "w8a8-fp8";
    if (n.rfind("w8a8", 0) == 0) return "w8a8-int8";
    if (n.rfind("w8a16", 0) == 0) return "w8a16";
    if (weight_bits < 8) return "w4a16";
    return "w8a16";
}

Decision decide(const std::vector<SchemeResult>& results, const WorkloadGoal& goal) {
    Decision out;
    if (results.empty()) return out;
    // First branch: the regime, read off the baseline (bf16 if priced, else the first scheme).
    const SchemeResult* base = &results.front();
    for (const SchemeResult& r : results)
        if (scheme_name(r.costs.scheme) == "bf16") base = &r;
    const DecodeStep& bd = base->decode;
    const std::string base_name = scheme_name(base->costs.scheme);
    // Whether a weight-only scheme of at most about 4 bits per weight is among those priced.
    const bool four_bit_offered = std::any_of(results.begin(), results.end(), [](const SchemeResult& r) {
        return r.costs.weight_only_path && r.costs.budget.effective_bits <= 5.0;
    });
    if (bd.bound == Bound::Compute) {
        out.regime = "compute-bound";
        out.reasons.push_back("At batch " + std::to_string(bd.batch) + " and " + std::to_string(bd.context_tokens) +
                              " tokens of context, " + base_name + " is compute-bound (" + fixed(bd.compute_time_s * 1e3, 2) +
                              " ms of arithmetic vs " + fixed(bd.memory_time_s * 1e3, 2) +
                              " ms of memory traffic): only faster tensor cores help, so W8A8 (fp8/int8 matmuls at twice the bf16 rate) leads and weight-only schemes fall to bf16 speed or below.");
    } else if (bd.kv_bytes > bd.weight_bytes) {
        out.regime = "memory-bound (KV cache)";
        out.reasons.push_back("At batch " + std::to_string(bd.batch) + " the KV cache is " +
                              fixed(100.0 * static_cast<double>(bd.kv_bytes) / static_cast<double>(bd.total_bytes()), 1) +
                              "% of the bytes a decode step moves: the cache dtype (--kv) is the lever, and it also admits more sequences.");
    } else {
        out.regime = "memory-bound (weights)";
        out.reasons.push_back("At batch " + std::to_string(bd.batch) + " the weights are " +
                              fixed(100.0 * static_cast<double>(bd.weight_bytes) / static_cast<double>(bd.total_bytes()), 1) +
                              "% of the bytes a decode step moves: fewer weight bytes buy time nearly in proportion, so " +
                              (four_bit_offered ? std::string("weight-only 4-bit leads.") : std::string("the scheme with the fewest weight bytes leads (no 4-bit scheme is in the set).")));
    }

    for (const SchemeResult& r : results) {
        RankedScheme rs;
        rs.scheme = scheme_name(r.costs.scheme);
        rs.value = goal.goal == Goal::Throughput ? r.throughput_tokens_per_s : r.decode.time_s;
        if (!r.admission.fits) {
            rs.vetoed = true;
            rs.reasons.push_back("does not fit: " + r.admission.reason);
        } else {
            rs.reasons.push_back((std::isfinite(r.speedup_vs_bf16) ? fixed(r.speedup_vs_bf16, 2) + "x bf16's tokens/s; " : std::string("bf16 does not fit; ")) +
                                 fixed(r.throughput_tokens_per_s, 0) + " tokens/s; " + fixed(static_cast<double>(r.decode.total_bytes()) / 1e9, 2) +
                                 " GB and " + fixed(r.decode.total_flop() / 1e9, 1) + " GFLOP per step, " + bound_name(r.decode.bound) +
                                 "-bound; admits " + std::to_string(r.admission.max_sequences) + " sequences");
        }
        if (!r.costs.note.empty()) rs.reasons.push_back(r.costs.note);
        const int bits = dtype_bits(r.costs.scheme.weights.storage);
        // `native`: the accuracy of the scheme it stores most weights with.
        const std::string cls = accuracy_class(stored_scheme_name(r.costs.scheme), bits);
        if (const AccuracyEvidence* e = evidence_for(cls)) {
            int risk = e->risk;
            rs.risk = risk;
            if (goal.reasoning_heavy && risk >= 1) ++risk;  // reasoning degrades first (2504.04823)
            if (risk > allowed_risk(goal.tolerance)) {
                rs.vetoed = true;
                rs.reasons.push_back(std::string("accuracy veto (") + accuracy_tolerance_name(goal.tolerance) + " tolerance" +
                                     (goal.reasoning_heavy ? ", reasoning-heavy" : "") + "): " + e->finding + " [" + e->citation + "]");
            } else if (cls != "bf16") {
                rs.reasons.push_back("accuracy: " + e->finding + " [" + e->citation + "]");
            }
        }
        out.ranking.push_back(std::move(rs));
    }
    // Schemes within 0.5% of each other are tied (the roofline cannot tell them apart); a tie goes
    // to the lower published accuracy risk.
    constexpr double kTieFraction = 0.005;
    std::stable_sort(out.ranking.begin(), out.ranking.end(), [&](const RankedScheme& a, const RankedScheme& b) {
        if (a.vetoed != b.vetoed) return !a.vetoed;
        if (std::abs(a.value - b.value) > kTieFraction * std::max(std::abs(a.value), std::abs(b.value)))
            return goal.goal == Goal::Throughput ? a.value > b.value : a.value < b.value;
        return a.risk < b.risk;
    });
    if (!out.ranking.empty() && !out.ranking.front().vetoed) {
        out.recommendation = out.ranking.front().scheme;
        out.reasons.push_back("Recommended: " + out.recommendation + " (" + goal_name(goal.goal) + " goal, " +
                              accuracy_tolerance_name(goal.tolerance) + " accuracy tolerance).");
    } else {
        const bool none_fits = std::none_of(results.begin(), results.end(), [](const SchemeResult& r) { return r.admission.fits; });
        out.reasons.push_back(none_fits ? "No scheme fits at this TP: raise --tp (each scheme's fits_from_tp) or use a larger GPU."
                                        : "Every priced scheme is vetoed: widen the accuracy tolerance or use a larger GPU.");
    }
    out.reasons.push_back("Accuracy is a veto, not a selector: aggregate scores hide flipped answers (flip rate tracks KL divergence, rho = 0.981, arXiv:2407.09141); measure on your own traffic.");
    return out;
}

std::optional<std::string> accuracy_veto(const Scheme& scheme, const WorkloadGoal& goal) {
    const std::string name = stored_scheme_name(scheme);
    const AccuracyEvidence* e = evidence_for(accuracy_class(name, dtype_bits(scheme.weights.storage)));
    if (!e) return std::nullopt;
    int risk = e->risk;
    if (goal.reasoning_heavy && risk >= 1) ++risk;
    if (risk <= allowed_risk(goal.tolerance)) return std::nullopt;
    return std::string("accuracy veto (") + accuracy_tolerance_name(goal.tolerance) + " tolerance" + (goal.reasoning_heavy ? ", reasoning-heavy" : "") +
           "): " + e->finding + " [" + e->citation + "]";
}

}  // namespace quantplan
