#pragma once
// The memory panel's what-if: the same plan priced with every KV-cache format, so the table can
// show what FP8 (or INT4) KV would admit and return. Each row is core's plan() with only
// workload.kv changed; nothing here prices anything itself.
#include <cstdint>
#include <string>
#include <vector>

#include "core/plan/plan.h"
#include "ui/window/background_job.h"

namespace quantplan::ui {

// One KV format's outcome for every scheme of the plan.
struct KvWhatIfRow {
    std::string kv;                              // kv_format_name()
    std::uint64_t kv_bytes_per_token = 0;        // per GPU, first scheme's (the same for every scheme)
    std::vector<std::int64_t> max_sequences;     // per scheme, in plan order
    std::vector<double> throughput_tokens_per_s;  // per scheme, at the admitted batch
    std::vector<double> speedup_vs_bf16;         // per scheme (NaN when bf16 does not fit)
    std::string error;                           // why this format could not be priced ("" when fine)
};

// The what-if table of one plan request.
struct KvWhatIf {
    std::vector<std::string> schemes;  // scheme names, plan order
    std::string current_kv;            // the request's own KV format
    std::vector<KvWhatIfRow> rows;     // kv_format_names() order
};

// Prices `request` once per KV format (crossovers off: the table needs admissions and throughput
// only). Polls `context` for cancellation between formats.
KvWhatIf kv_what_if(const PlanRequest& request, JobContext& context);

}  // namespace quantplan::ui
