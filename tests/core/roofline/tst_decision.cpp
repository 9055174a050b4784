// The decision procedure (seed 000 §4.1.4): regime first, ranking by goal, accuracy veto last.
#include <boost/test/unit_test.hpp>

#include "core/base/error.h"
#include "core/plan/plan.h"
#include "tests/core/test_support.h"

using namespace quantplan;

namespace {

Decision decide_for(std::int64_t batch, std::int64_t context, AccuracyTolerance tol = AccuracyTolerance::Moderate,
                    bool reasoning = false, const char* schemes = nullptr, const char* kv = "bf16") {
    PlanRequest r;
    r.model = test::bundled_model("qwen3-8b");
    r.gpu = test::bundled_gpu("h100-sxm");
    r.efficiency = builtin_efficiency_profile("realistic");
    r.workload.batch = batch;
    r.workload.context_tokens = context;
    r.workload.kv = parse_kv_format(kv);
    if (schemes) r.schemes = parse_scheme_list(schemes);
    r.goal.tolerance = tol;
    r.goal.reasoning_heavy = reasoning;
    return plan(r).decision;
}

bool vetoed(const Decision& d, const std::string& scheme) {
    for (const RankedScheme& r : d.ranking)
        if (r.scheme == scheme) return r.vetoed;
    throw std::runtime_error("not ranked: " + scheme);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(decision)

BOOST_AUTO_TEST_CASE(low_batch_is_weight_bound_and_picks_4bit_weight_only) {
    const Decision d = decide_for(1, 4096);
    BOOST_TEST(d.regime == "memory-bound (weights)");
    BOOST_TEST(d.recommendation.rfind("w4a16", 0) == 0u, d.recommendation);
    BOOST_TEST(d.ranking.size() == 6u);
}

// The weight-bound reason names 4-bit only when a 4-bit weight-only scheme is priced.
BOOST_AUTO_TEST_CASE(weight_bound_reason_names_what_is_offered) {
    const Decision with = decide_for(1, 4096);
    BOOST_TEST_REQUIRE(!with.reasons.empty());
    BOOST_TEST(with.reasons.front().find("weight-only 4-bit leads") != std::string::npos, with.reasons.front());
    const Decision without = decide_for(1, 4096, AccuracyTolerance::Moderate, false, "bf16,w8a16-int8,w8a8-fp8");
    BOOST_TEST_REQUIRE(!without.reasons.empty());
    BOOST_TEST(without.reasons.front().find("4-bit leads") == std::string::npos, without.reasons.front());
    BOOST_TEST(without.reasons.front().find("fewest weight bytes") != std::string::npos, without.reasons.front());
}

BOOST_AUTO_TEST_CASE(high_batch_short_context_is_compute_bound_and_picks_w8a8) {
    const Decision d = decide_for(1024, 128);
    BOOST_TEST(d.regime == "compute-bound");
    BOOST_TEST(d.recommendation == "w8a8-fp8");
}

BOOST_AUTO_TEST_CASE(long_context_high_concurrency_is_cache_bound) {
    const Decision d = decide_for(1024, 4096);
    BOOST_TEST(d.regime == "memory-bound (KV cache)");
    BOOST_TEST(d.reasons.front().find("--kv") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(accuracy_is_a_veto_applied_last) {
    const Decision strict = decide_for(1, 4096, AccuracyTolerance::Strict);
    BOOST_TEST(vetoed(strict, "w4a16-g128"));
    BOOST_TEST(vetoed(strict, "w8a8-int8"));
    BOOST_TEST(!vetoed(strict, "w8a8-fp8"));
    // Memory-bound at batch 1: 8-bit weights with or without 8-bit activations move the same bytes.
    BOOST_TEST((strict.recommendation == "w8a8-fp8" || strict.recommendation == "w8a16-int8"), strict.recommendation);
    const Decision reasoning = decide_for(1, 4096, AccuracyTolerance::Moderate, true);
    BOOST_TEST(vetoed(reasoning, "w4a16-g128"));
    BOOST_TEST(!vetoed(reasoning, "w8a16-int8"));
    const Decision loose = decide_for(1, 4096, AccuracyTolerance::Loose, false, "bf16,w3a16-g128,w4a16-g128");
    BOOST_TEST(vetoed(loose, "w3a16-g128"));  // sub-4-bit collapses are vetoed at any tolerance
    BOOST_TEST(loose.recommendation == "w4a16-g128");
    for (const RankedScheme& r : loose.ranking)
        if (r.vetoed) {
            BOOST_TEST(r.reasons.back().find("arXiv") != std::string::npos, r.reasons.back());  // cites the evidence
        }
}

BOOST_AUTO_TEST_CASE(every_evidence_row_is_cited) {
    for (const AccuracyEvidence& e : accuracy_evidence()) {
        BOOST_TEST(!e.finding.empty(), e.scheme_class);
        BOOST_TEST(!e.citation.empty(), e.scheme_class);
    }
    BOOST_TEST(accuracy_class("w8a8-fp8-block128", 8) == "w8a8-fp8");
    BOOST_TEST(accuracy_class("w2a16-g64", 2) == "sub4");
    BOOST_CHECK_THROW(parse_goal("speed"), Error);
    BOOST_CHECK_THROW(parse_accuracy_tolerance("yolo"), Error);
}

BOOST_AUTO_TEST_SUITE_END()
