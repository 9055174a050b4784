#pragma once
// The decision procedure of seed 000 §4.1.4: the roofline decides the first branch (which regime
// the workload is in), the schemes are ranked by the goal, and accuracy is a veto applied last,
// backed by published results (assets/accuracy.json, each with its citation).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace quantplan {

struct SchemeResult;
struct Scheme;

// What the user optimises for.
enum class Goal : std::uint8_t { Throughput, Latency };

// How much accuracy loss the user accepts.
enum class AccuracyTolerance : std::uint8_t {
    Strict,    // near-lossless only (published: FP8 W8A8 "effectively lossless")
    Moderate,  // published degradation up to a few percent (INT8 W8A8, INT4 g128 weight-only)
    Loose,     // anything that still runs; sub-4-bit collapses are still vetoed
};

Goal parse_goal(std::string_view name);                          // "throughput" | "latency"
AccuracyTolerance parse_accuracy_tolerance(std::string_view name);  // "strict" | "moderate" | "loose"
const char* goal_name(Goal g);
const char* accuracy_tolerance_name(AccuracyTolerance t);

// The goal side of a workload (the rest is in Workload).
struct WorkloadGoal {
    Goal goal = Goal::Throughput;
    AccuracyTolerance tolerance = AccuracyTolerance::Moderate;
    bool reasoning_heavy = false;  // long chains of thought degrade first (arXiv 2504.04823)
};

// A published accuracy finding, as data.
struct AccuracyEvidence {
    std::string scheme_class;  // "w8a8-fp8", "w8a8-int8", "w4a16", "w8a16", "sub4", "nvfp4", "mxfp4", "bf16"
    int risk = 0;              // 0 lossless ... 3 collapses: compared with the tolerance
    std::string finding;
    std::string citation;
};

// The bundled evidence table (assets/accuracy.json is its documented copy; this is the one the
// planner uses, so a missing assets folder cannot change a decision).
const std::vector<AccuracyEvidence>& accuracy_evidence();

// The class a scheme falls into for the accuracy veto.
std::string accuracy_class(std::string_view scheme_name, int weight_bits);

// One scheme's place in the ranking.
struct RankedScheme {
    std::string scheme;
    double value = 0;           // tokens/s (throughput goal) or s per step (latency goal)
    bool vetoed = false;
    int risk = 0;               // published accuracy risk of its class (0 lossless .. 3 collapses)
    std::vector<std::string> reasons;
};

// The recommendation and why.
struct Decision {
    std::string regime;               // "memory-bound (weights)", "memory-bound (KV cache)", "compute-bound"
    std::string recommendation;       // the top scheme not vetoed ("" when all are)
    std::vector<RankedScheme> ranking;
    std::vector<std::string> reasons; // in words, first branch first
    std::vector<std::string> warnings;  // engines' warnings for the chosen schemes
};

// Ranks priced schemes. `results` must hold bf16 or any baseline; their admission decides the batch.
Decision decide(const std::vector<SchemeResult>& results, const WorkloadGoal& goal);

// The accuracy veto alone for `scheme` under `goal` (what decide() applies): the finding and its
// citation when vetoed, nullopt when the scheme is within the tolerance.
std::optional<std::string> accuracy_veto(const Scheme& scheme, const WorkloadGoal& goal);

}  // namespace quantplan
