#include "core/fidelity/spec_fit.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include <nlohmann/json.hpp>

#include "core/base/error.h"
#include "core/base/json_guard.h"
#include "core/base/stats.h"
#include "core/base/text_file.h"
#include "core/checkpoint/model_config_json.h"
#include "core/engine/step_model.h"

namespace quantplan::fidelity {
namespace {

using nlohmann::json;

std::string str(const json& j, const char* key) {
    const auto it = j.find(key);
    if (it == j.end() || it->is_null()) return {};
    if (it->is_string()) return it->get<std::string>();
    return it->dump();
}

std::int64_t integer(const json& j, const char* key) {
    const auto it = j.find(key);
    return it != j.end() && it->is_number_integer() ? it->get<std::int64_t>() : 0;
}

std::string stem(const std::string& id) { return id.substr(0, id.rfind('/')); }

std::optional<engine::SpecMethod> method_of(const std::string& m) {
    if (m == "eagle3") return engine::SpecMethod::Eagle3;
    if (m == "eagle") return engine::SpecMethod::Eagle;
    if (m == "mtp") return engine::SpecMethod::Mtp;
    if (m == "ngram") return engine::SpecMethod::Ngram;
    if (m == "draft") return engine::SpecMethod::Draft;
    return std::nullopt;
}

// A metric that is a time per token (its speed-up is the baseline over it, not it over the baseline).
bool time_metric(const std::string& metric) { return metric == "tpot_s" || metric == "itl_s"; }

// Prices a usable run once (fills plain_s, base_s, forwards, tp); false with a reason when the
// engine model cannot.
void price(SpecRun& r, const json& setup, const SpecFitInputs& in) {
    const GpuProfile* gpu = nullptr;
    for (const GpuProfile& g : in.gpus)
        if (g.id == r.gpu) gpu = &g;
    if (!gpu) {
        r.skip_reason = "GPU " + r.gpu + " is not bundled";
        return;
    }
    ModelConfig model;
    try {
        model = resolve_model(r.model, in.models_dir);
    } catch (const Error& e) {
        r.skip_reason = std::string("model: ") + e.what();
        return;
    }
    const std::string version = str(setup, "engine_version");
    engine::EngineSetup es;
    try {
        // A version the record states as a number picks its profile; otherwise the newest.
        const bool numeric = !version.empty() && std::isdigit(static_cast<unsigned char>(version.front()));
        es = engine::make_engine_setup(*in.catalog, numeric ? r.engine + "@" + version : r.engine, true);
    } catch (const Error& e) {
        r.skip_reason = std::string("engine: ") + e.what();
        return;
    }
    const std::string scheme_name = str(setup, "scheme").empty() ? "bf16" : str(setup, "scheme");
    Scheme scheme;
    try {
        scheme = parse_scheme(scheme_name);
    } catch (const Error& e) {
        r.skip_reason = std::string("scheme: ") + e.what();
        return;
    }
    const std::int64_t input = std::max<std::int64_t>(0, integer(setup, "input_tokens"));
    const std::int64_t output = std::max<std::int64_t>(0, integer(setup, "output_tokens"));
    // The context a step sees on average: the prompt and half the output, when stated; else 1,024
    // (MT-Bench's prompts and answers: a few hundred tokens each), said in the docs.
    const std::int64_t context = input + output > 0 ? std::max<std::int64_t>(1, input + output / 2) : 1024;
    es.profile.defaults = engine::defaults_for_run(es.profile, gpu->id, gpu->memory_usable_bytes, es.choice.version_asked, context);
    Workload w;
    w.batch = r.batch;
    w.context_tokens = context;
    w.kv = parse_kv_format("bf16");
    w.engine.gpu_memory_utilization = es.profile.defaults.gpu_memory_utilization;
    w.engine.max_num_seqs = es.profile.defaults.max_num_seqs;
    w.engine.max_num_batched_tokens = es.profile.defaults.max_num_batched_tokens;
    w.engine.kv_block_tokens = es.profile.defaults.block_size_tokens;
    const std::vector<TensorInfo> inventory = compress_inventory(tensor_inventory(model));
    SchemeCosts costs;
    try {
        costs = engine::costs_as_served(scheme_costs(model, inventory, scheme, w.kv, *gpu), model, es.profile);
    } catch (const Error& e) {
        r.skip_reason = std::string("costs: ") + e.what();
        return;
    }
    const std::optional<engine::SpecMethod> method = method_of(r.method);
    engine::SpecRequest spec{*method, r.k, {}};
    // The TP the source states, else the smallest that holds the model and the draft.
    r.tp = integer(setup, "tp");
    r.tp_stated = r.tp > 0;
    for (const std::int64_t tp : r.tp_stated ? std::vector<std::int64_t>{r.tp} : std::vector<std::int64_t>{1, 2, 4, 8}) {
        if (model.num_attention_heads % tp != 0) continue;
        w.tensor_parallel = tp;
        const engine::DraftCost draft = engine::draft_cost(spec, model, costs, nullptr, nullptr, tp);
        w.engine.draft_weight_bytes_per_gpu = draft.weight_bytes;
        w.engine.draft_kv_bytes_per_token_per_gpu = draft.kv_bytes_per_token;
        w.engine.lookahead_tokens = r.k + engine::spec_lookahead_slots(r.engine, *method, r.k);
        if (!engine::engine_admission(costs, model, *gpu, es, w).fits) continue;
        r.tp = tp;
        const engine::StepLookups lookups = engine::resolve_step_lookups(costs, model, *gpu, es, w);
        const engine::Acceptance acceptance = engine::acceptance_from_mean_length(std::min(r.acceptance_length, static_cast<double>(r.k + 1)), r.k);
        const engine::SpecStep st = engine::engine_spec_step(lookups, costs, model, *gpu, es, w, r.batch, context, spec, acceptance, draft, {});
        r.plain_s = st.plain_s;
        r.base_s = st.time_s;
        r.forwards = draft.extend_forwards + draft.single_forwards;
        r.usable = true;
        return;
    }
    r.skip_reason = r.tp_stated ? "does not fit at the stated TP" : "fits at no TP up to 8";
}

}  // namespace

double SpecRun::predict(const engine::SpecTerms& t) const {
    const double time = base_s + static_cast<double>(forwards) * t.draft_forward_s + static_cast<double>(batch) * t.host_per_sequence_s;
    return time > 0 ? plain_s * acceptance_length / time : 0.0;
}

std::vector<SpecRun> spec_runs(const std::filesystem::path& corpus_file, const SpecFitInputs& in) {
    const std::string name = corpus_file.filename().string();
    const json j = parse_untrusted_json(read_text_file(corpus_file, "speculative corpus"), name);
    if (!j.is_object() || str(j, "format") != "quantplan-spec-measurements/1")
        throw Error(name + ": format", "expected \"quantplan-spec-measurements/1\"");
    if (!j.contains("records") || !j["records"].is_array()) throw Error(name + ": records", "missing");
    std::map<std::string, const json*> by_id;
    std::map<std::string, double> acceptance_by_stem;
    for (const json& r : j["records"]) {
        if (!r.is_object() || !r.contains("id") || !r["id"].is_string()) throw Error(name + ": records", "every record needs an id");
        by_id[r["id"].get<std::string>()] = &r;
        if (str(r, "metric") == "acceptance_length" && r.contains("value") && r["value"].is_number() &&
            !(r.contains("acceptance_length_includes_bonus") && r["acceptance_length_includes_bonus"] == false))
            acceptance_by_stem[stem(r["id"].get<std::string>())] = r["value"].get<double>();
    }
    const json file_defaults = j.contains("defaults") && j["defaults"].is_object() && j["defaults"].contains("setup") ? j["defaults"]["setup"] : json::object();
    std::vector<SpecRun> out;
    for (const json& r : j["records"]) {
        json setup = file_defaults;
        if (r.contains("setup") && r["setup"].is_object()) setup.update(r["setup"]);
        const std::string metric = str(r, "metric");
        const std::string method = str(setup, "spec_method");
        if (method.empty()) continue;
        if (metric != "speedup" && metric != "tpot_s" && metric != "output_tokens_per_s" && metric != "decode_tokens_per_s") continue;
        if (!r.contains("value") || !r["value"].is_number()) continue;
        SpecRun run;
        run.id = r["id"].get<std::string>();
        const json source = r.contains("source") && r["source"].is_object() ? r["source"] : json::object();
        run.source_key = !str(source, "repository").empty() ? str(source, "repository") + "/" + str(source, "file") + str(source, "pull_request") + str(source, "issue")
                                                            : str(source, "url");
        const double value = r["value"].get<double>();
        if (metric == "speedup") {
            if (str(r, "unit") != "x") continue;
            run.measured_speedup = value;
        } else {
            const auto b = by_id.find(str(r, "baseline_record"));
            if (b == by_id.end() || str(*b->second, "metric") != metric || !(*b->second).contains("value") || !(*b->second)["value"].is_number())
                continue;
            const double base = (*b->second)["value"].get<double>();
            if (!(base > 0) || !(value > 0)) continue;
            run.measured_speedup = time_metric(metric) ? base / value : value / base;
        }
        run.engine = str(setup, "engine");
        run.model = str(setup, "model");
        run.gpu = str(setup, "gpu");
        run.method = method;
        run.k = integer(setup, "spec_k");
        run.batch = integer(setup, "batch") > 0 ? integer(setup, "batch") : integer(setup, "concurrency");
        const auto acc = acceptance_by_stem.find(stem(run.id));
        const std::int64_t topk = integer(setup, "spec_topk");
        if (run.engine != "vllm" && run.engine != "sglang") run.skip_reason = "engine '" + run.engine + "' is not vLLM or SGLang";
        else if (run.model.empty()) run.skip_reason = "model not bundled";
        else if (run.gpu.empty()) run.skip_reason = "GPU not stated (or not one bundled GPU)";
        else if (!method_of(method) || method == "ngram" || method == "draft") run.skip_reason = "method " + method + " has no drafter priced from the record alone";
        else if (run.k < 1) run.skip_reason = "K not stated";
        else if (topk > 1) run.skip_reason = "a draft tree (topk " + std::to_string(topk) + ") is not modelled";
        else if (run.batch < 1) run.skip_reason = "batch or concurrency not stated";
        if (run.skip_reason.empty()) {
            if (acc == acceptance_by_stem.end()) run.skip_reason = "no acceptance length measured in the run";
            else run.acceptance_length = acc->second;
        }
        if (run.skip_reason.empty()) price(run, setup, in);
        out.push_back(std::move(run));
    }
    return out;
}

std::map<std::string, engine::SpecTerms> fit_spec_terms(const std::vector<SpecRun>& runs, const std::vector<bool>& excluded) {
    std::map<std::string, std::vector<const SpecRun*>> by_engine;
    std::vector<const SpecRun*> all;
    for (std::size_t i = 0; i < runs.size(); ++i) {
        if (!runs[i].usable || (!excluded.empty() && excluded[i])) continue;
        by_engine[runs[i].engine].push_back(&runs[i]);
        all.push_back(&runs[i]);
    }
    // The grid: a draft forward's fixed cost 0 to 2 ms by 25 us; the host's cost per sequence 0 to
    // 200 us by 10 us, the order of the serving fit's host cost per sequence (40 to 150 us). Left
    // free, the median fit takes about 1 ms per sequence, a stand-in for what the step model misses
    // at batch 8 (docs/speculative.md), which would end speculation's gain at a batch of about 16.
    const auto best = [](const std::vector<const SpecRun*>& set) {
        engine::SpecTerms b;
        double best_err = 1e300;
        for (int ia = 0; ia <= 80; ++ia)
            for (int ih = 0; ih <= 20; ++ih) {
                engine::SpecTerms t;
                t.draft_forward_s = 25e-6 * ia;
                t.host_per_sequence_s = 10e-6 * ih;
                std::vector<double> e;
                e.reserve(set.size());
                for (const SpecRun* r : set) e.push_back(std::abs(r->predict(t) / r->measured_speedup - 1));
                const double m = median(e);
                if (m < best_err - 1e-12) best_err = m, b = t;
            }
        return b;
    };
    std::map<std::string, engine::SpecTerms> out;
    if (all.empty()) return out;
    const engine::SpecTerms pooled = best(all);
    for (const char* e : {"vllm", "sglang"}) {
        const auto it = by_engine.find(e);
        out[e] = it != by_engine.end() && it->second.size() >= 4 ? best(it->second) : pooled;
    }
    return out;
}

SpecFidelity evaluate_spec_fidelity(const std::vector<SpecRun>& runs) {
    SpecFidelity f;
    f.runs = runs;
    f.terms = fit_spec_terms(runs);
    std::set<std::string> sources;
    std::vector<double> abs_fit, abs_loo, signed_loo, abs_loso;
    for (std::size_t i = 0; i < f.runs.size(); ++i) {
        SpecRun& r = f.runs[i];
        if (!r.usable) continue;
        ++f.usable;
        sources.insert(r.source_key);
        r.fitted = r.predict(f.terms.at(r.engine));
        std::vector<bool> out(runs.size(), false);
        out[i] = true;
        const auto loo = fit_spec_terms(runs, out);
        r.loo = loo.empty() ? 0.0 : r.predict(loo.at(r.engine));
        abs_fit.push_back(std::abs(r.fitted / r.measured_speedup - 1));
        if (r.loo > 0) {
            abs_loo.push_back(std::abs(r.loo / r.measured_speedup - 1));
            signed_loo.push_back(r.loo / r.measured_speedup - 1);
        }
    }
    f.sources = sources.size();
    if (f.sources > 1)
        for (SpecRun& r : f.runs) {
            if (!r.usable) continue;
            std::vector<bool> out(runs.size(), false);
            for (std::size_t i = 0; i < runs.size(); ++i) out[i] = runs[i].source_key == r.source_key;
            const auto loso = fit_spec_terms(runs, out);
            if (loso.empty()) continue;
            r.loso = r.predict(loso.at(r.engine));
            abs_loso.push_back(std::abs(r.loso / r.measured_speedup - 1));
        }
    f.median_abs_fitted = median(abs_fit);
    f.median_abs_loo = median(abs_loo);
    f.median_signed_loo = median(signed_loo);
    f.p90_abs_loo = quantile(abs_loo, 0.9);
    f.p10_loo = quantile(signed_loo, 0.1);
    f.p90_loo = quantile(signed_loo, 0.9);
    f.median_abs_loso = abs_loso.empty() ? -1 : median(abs_loso);
    return f;
}

std::string spec_fit_json(const SpecFidelity& f) {
    json engines = json::object();
    for (const auto& [e, t] : f.terms)
        engines[e] = {{"draft_forward_s", t.draft_forward_s}, {"host_per_sequence_s", t.host_per_sequence_s}, {"ngram_per_sequence_s", t.ngram_per_sequence_s}};
    json runs = json::array();
    for (const SpecRun& r : f.runs) {
        if (!r.usable) continue;
        runs.push_back({{"id", r.id}, {"measured_speedup", r.measured_speedup}, {"fitted", r.fitted}, {"loo", r.loo},
                        {"tp", r.tp}, {"tp_stated", r.tp_stated}});
    }
    json doc = {{"format", "quantplan-spec-fit/1"},
                {"basis", "fitted by quantplan --fit-spec to assets/measurements/speculative/speculative-decoding.json (docs/speculative.md)"},
                {"engines", engines},
                {"usable_runs", f.usable},
                {"sources", f.sources},
                {"speedup_error",
                 {{"median_abs_fitted", f.median_abs_fitted},
                  {"median_abs_loo", f.median_abs_loo},
                  {"median_signed_loo", f.median_signed_loo},
                  {"p90_abs_loo", f.p90_abs_loo},
                  {"band_p10", f.p10_loo},
                  {"band_p90", f.p90_loo},
                  {"median_abs_loso", f.median_abs_loso >= 0 ? json(f.median_abs_loso) : json(nullptr)}}},
                {"runs", runs}};
    return doc.dump(2) + "\n";
}

}  // namespace quantplan::fidelity
