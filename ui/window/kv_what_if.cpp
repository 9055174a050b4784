#include "ui/window/kv_what_if.h"

#include "core/base/error.h"
#include "core/scheme/scheme.h"

namespace quantplan::ui {

KvWhatIf kv_what_if(const PlanRequest& request, JobContext& context) {
    KvWhatIf out;
    for (const Scheme& s : request.schemes) out.schemes.push_back(scheme_name(s));
    out.current_kv = kv_format_name(request.workload.kv);
    const std::vector<std::string>& names = kv_format_names();
    for (std::size_t i = 0; i < names.size(); ++i) {
        context.check_cancelled();
        context.report(static_cast<int>(100 * i / names.size()), QString::fromStdString("KV " + names[i]));
        KvWhatIfRow row;
        PlanRequest r = request;
        r.workload.kv = parse_kv_format(names[i]);
        row.kv = kv_format_name(r.workload.kv);
        // One batch is enough to scan: the table shows admissions and throughput, not crossovers.
        r.crossover_max_batch = 1;
        try {
            const PlanResult p = plan(std::move(r));
            for (const SchemeResult& s : p.schemes) {
                row.max_sequences.push_back(s.admission.max_sequences);
                row.throughput_tokens_per_s.push_back(s.throughput_tokens_per_s);
                row.speedup_vs_bf16.push_back(s.speedup_vs_bf16);
            }
            if (!p.schemes.empty()) row.kv_bytes_per_token = p.schemes.front().admission.kv_bytes_per_token;
        } catch (const Error& e) {
            row.error = e.what();
        }
        out.rows.push_back(std::move(row));
    }
    context.report(100, QStringLiteral("KV what-if done"));
    return out;
}

}  // namespace quantplan::ui
