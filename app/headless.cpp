#include "app/headless.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "app/commands.h"
#include "app/text_table.h"
#include "app/data_paths.h"
#include "app/scenario.h"
#include "core/base/atomic_file.h"
#include "core/base/error.h"
#include "core/base/json_guard.h"
#include "core/base/text_file.h"
#include "core/checkpoint/model_config_json.h"
#include "core/errorsim/errorsim_json.h"
#include "core/fidelity/fit.h"
#include "core/hardware/calibration.h"
#include "core/plan/measured_overlay.h"
#include "core/report/report_json.h"

namespace quantplan::app {
namespace {

// Speculative decoding beside plain decoding, per scheme and batch, and the batch where it stops paying.
void print_speculation(const PlanResult& p, std::ostream& out) {
    const SpecPlanRequest& s = *p.request.spec;
    out << "\nspeculative decoding " << engine::spec_method_name(s.request.method)
        << (s.request.draft_model.empty() ? "" : ":" + s.request.draft_model) << ":" << s.request.k << ", mean acceptance length "
        << fixed(s.acceptance.mean_length(), 2) << " tokens per step (per position:";
    for (double r : s.acceptance.per_position) out << " " << fixed(r, 2);
    out << "; " << s.acceptance.source << ")\n";
    if (!p.speculation.empty()) {
        out << "  draft: " << p.speculation.front().draft.description << "; checkpoint with the draft:";
        for (const SchemeSpeculation& sp : p.speculation) out << " " << sp.scheme << " " << fixed(static_cast<double>(sp.checkpoint_bytes) / 1e9, 2) << " GB";
        out << "\n";
    }
    if (s.disable_above_batch > 0) out << "  the engine runs plain decode steps above batch " << s.disable_above_batch << "\n";
    out << "  " << std::left << std::setw(22) << "scheme" << std::right << std::setw(7) << "batch" << std::setw(14) << "TPOT ms plain" << std::setw(13)
        << "TPOT ms spec" << std::setw(10) << "speed-up" << std::setw(16) << "tok/s plain" << std::setw(14) << "tok/s spec" << "\n";
    for (const SchemeSpeculation& sp : p.speculation)
        for (const SpecPoint& pt : sp.points)
            out << "  " << std::left << std::setw(22) << sp.scheme << std::right << std::setw(7) << pt.batch << " " << std::setw(13)
                << fixed(pt.plain_tpot_s * 1e3, 2) << " " << std::setw(12) << fixed(pt.tpot_s * 1e3, 2) << " " << std::setw(9)
                << (fixed(pt.speedup, 2) + "x") << " " << std::setw(15) << fixed(pt.plain_tokens_per_s, 0) << " " << std::setw(13)
                << fixed(pt.tokens_per_s, 0) << (pt.disabled ? "  (off: plain steps)" : "") << (pt.batch == sp.at_batch.batch ? "  <- plan's batch" : "")
                << (sp.stops_paying_batch && pt.batch == *sp.stops_paying_batch ? "  <- stops paying" : "") << "\n";
    if (s.terms.band_p10 != 0 || s.terms.band_p90 != 0)
        out << "  speed-up band: the measured speed-up is expected within x / " << fixed(1 + s.terms.band_p90, 2) << " to x / "
            << fixed(1 + s.terms.band_p10, 2) << " of a predicted x (the fit's leave-one-out p10-p90, docs/speculative.md)\n";
    out << "  speculation stops paying (speed-up below 1) at batch:";
    for (const SchemeSpeculation& sp : p.speculation)
        out << "\n    " << std::left << std::setw(22) << sp.scheme << std::right
            << (sp.stops_paying_batch ? std::to_string(*sp.stops_paying_batch) +
                                            (sp.stops_paying_admitted ? "" : " (above what the KV cache admits at this context)")
                                      : "pays at every batch up to " + std::to_string(p.request.crossover_max_batch));
    out << "\n";
}

void print_table(const PlanResult& p, std::ostream& out) {
    const auto& q = p.request;
    out << q.model.name << " on " << q.gpu.name << " (" << q.efficiency.name << " profile), batch " << q.workload.batch
        << ", context " << q.workload.context_tokens << ", KV " << (q.workload.kv_auto ? "auto (" + kv_format_name(q.workload.kv) + ")" : kv_format_name(q.workload.kv)) << ", TP "
        << q.workload.tensor_parallel << (q.workload.expert_parallel > 1 ? ", experts whole per GPU (EP " + std::to_string(q.workload.expert_parallel) + ")" : std::string())
        << (q.workload.data_parallel > 1 ? ", " + std::to_string(q.workload.data_parallel) + " data-parallel engines (batch each)" : std::string())
        << (q.workload.nodes > 1 ? ", " + std::to_string(q.workload.nodes) + " nodes" : std::string())
        << "\n";
    out << "parameters: " << p.parameters.total << " total, " << p.parameters.block_linears << " in "
        << p.parameters.block_linear_count << " block linears"
        << (p.parameters.vision > 0 ? ", " + std::to_string(p.parameters.vision) + " in the vision encoder (loaded, kept in the model dtype, not read by a text step)" : std::string())
        << "\n";
    if (!q.model.not_counted.empty()) out << "not counted: " << q.model.not_counted << "\n";
    if (q.engine && q.engine->price_steps)
        out << "engine: " << q.engine->profile.title << " [" << q.engine->profile.id << "], fitted on corpus " << q.engine->corpus_checksum
            << "; bands are p10-p90 of the fit's leave-one-out errors (docs/fidelity.md)\n";
    out << "\n";
    const bool banded = std::any_of(p.schemes.begin(), p.schemes.end(), [](const SchemeResult& r) { return r.bands.has_value(); });
    out << std::left << std::setw(20) << "scheme" << std::right << std::setw(9) << "eff.bits" << std::setw(15) << "checkpoint B"
        << std::setw(9) << "GB" << std::setw(8) << "x bf16" << std::setw(8) << "batch" << std::setw(11) << "step ms" << std::setw(9)
        << "bound" << std::setw(9) << "max seq" << std::setw(banded ? 22 : 12) << (banded ? "tok/s (p10-p90)" : "tok/s") << std::setw(9)
        << "speedup" << "\n";
    for (const SchemeResult& r : p.schemes) {
        const auto& b = r.costs.budget;
        out << std::left << std::setw(20) << scheme_name(r.costs.scheme) << std::right << std::setw(9) << fixed(b.effective_bits, 4)
            << std::setw(15) << b.checkpoint_bytes << std::setw(9) << fixed(static_cast<double>(b.checkpoint_bytes) / 1e9, 2)
            << std::setw(8) << fixed(b.compression_vs_bf16, 2) << std::setw(8) << r.decode.batch << std::setw(11)
            << fixed(r.decode.time_s * 1e3, 3) << std::setw(9) << bound_name(r.decode.bound) << std::setw(9)
            << r.admission.max_sequences << std::setw(banded ? 22 : 12)
            << (r.bands && r.bands->has_step && r.throughput_tokens_per_s > 0
                    ? fixed(r.throughput_tokens_per_s, 0) + " (" + fixed(r.bands->throughput_tokens_per_s.low, 0) + "-" +
                          fixed(r.bands->throughput_tokens_per_s.high, 0) + ")"
                    : fixed(r.throughput_tokens_per_s, 0))
            << std::setw(9) << (std::isfinite(r.speedup_vs_bf16) ? fixed(r.speedup_vs_bf16, 2) : std::string("-")) << "\n";
        if (r.bands) {
            const SchemeBands& b = *r.bands;
            const auto range = [](bool has, double lo, double hi, double scale, int digits) {
                return has ? "(" + fixed(lo * scale, digits) + "-" + fixed(hi * scale, digits) + ")" : std::string("(no band: too few corpus points)");
            };
            out << "    band: step " << range(b.has_step, b.step_time_s.low, b.step_time_s.high, 1e3, 2) << " ms, TTFT "
                << fixed(r.prefill.time_s * 1e3, 1) << " ms " << range(b.has_ttft, b.ttft_s.low, b.ttft_s.high, 1e3, 1) << ", KV cache "
                << r.admission.kv_cache_tokens << " tokens " << range(b.has_kv, b.kv_cache_tokens.low, b.kv_cache_tokens.high, 1, 0) << "\n";
            if (!b.covered) out << "    not covered: " << b.coverage_note << "\n";
        }
        if (!r.admission.fits)
            out << "    does not fit at TP " << q.workload.tensor_parallel << "; "
                << (r.fits_from_tp ? "fits from TP " + std::to_string(*r.fits_from_tp) : std::string("fits at no TP up to 8")) << ": "
                << r.admission.reason << "\n";
        if (!r.costs.note.empty()) out << "    note: " << r.costs.note << "\n";
    }
    if (!p.schemes.empty() && !cache_is_uniform(p.schemes.front().costs)) {
        const SchemeResult& r = p.schemes.front();
        out << "\nKV cache by layer type (" << kv_format_name(q.workload.kv) << ", per GPU): "
            << cache_layout_text(cache_by_layer_type(r.costs, r.admission.kv_bytes_per_token, r.admission.state_bytes_per_sequence)) << ", " << r.admission.kv_bytes_per_token
            << " bytes per token\n";
    }
    if (!p.crossovers.empty()) {
        out << "\ncrossovers (batch 1.." << q.crossover_max_batch << "):\n";
        for (const Crossover& c : p.crossovers)
            out << "  B=" << fixed(c.batch, 0) << ": " << c.faster_below << " faster below, " << c.faster_above << " above\n";
    }
    if (q.spec && !p.speculation.empty()) print_speculation(p, out);
    if (const std::optional<std::string> none = no_scheme_fits(p)) out << "\n" << *none << "\n";
    out << "\ndecision (" << p.decision.regime << "): " << (p.decision.recommendation.empty() ? "none" : p.decision.recommendation) << "\n";
    for (const std::string& r : p.decision.reasons) out << "  - " << r << "\n";
    for (const std::string& w : p.decision.warnings) out << "  warning: " << w << "\n";
}

void print_measured(const Calibration& c, const MeasuredOverlay& o, std::ostream& out) {
    out << "\nmeasured on " << c.device.name << " (" << c.gpu_profile << ", " << c.created_by << "): decode step, predicted vs measured\n";
    for (const std::string& n : o.notes) out << "  note: " << n << "\n";
    if (o.points.empty()) return;
    out << "  " << std::left << std::setw(20) << "scheme" << std::setw(14) << "kernel" << std::right << std::setw(7) << "batch" << std::setw(14)
        << "predicted ms" << std::setw(13) << "measured ms" << std::setw(9) << "error" << "\n";
    for (const MeasuredStepPoint& p : o.points)
        out << "  " << std::left << std::setw(20) << p.scheme << std::setw(14) << p.kernel << std::right << std::setw(7) << p.batch << std::setw(14)
            << fixed(p.predicted_step_s * 1e3, 3) << std::setw(13) << fixed(p.measured_step_s * 1e3, 3) << std::setw(8)
            << fixed(p.relative_error() * 100, 1) << "%" << (p.admitted ? "" : "  (not admitted)") << "\n";
    out << "  median |error| " << fixed(median_abs_relative_error(o.points) * 100, 1)
        << "% (measured step: the roofline step with its decoder linears as timed; docs/kernels.md)\n";
}

}  // namespace

std::optional<Calibration> calibration_from_options(const CliOptions& o) {
    if (!o.calibration) return std::nullopt;
    return load_calibration(*o.calibration);
}

errorsim::ErrorsimRequest errorsim_request_from_options(const CliOptions& o) {
    errorsim::ErrorsimRequest r = errorsim::default_errorsim_request();
    if (o.errorsim_formats) r.formats = errorsim::parse_weight_formats(*o.errorsim_formats, "--errorsim-formats");
    if (o.errorsim_granularities) r.granularities = errorsim::parse_granularities(*o.errorsim_granularities, "--errorsim-granularities");
    if (o.errorsim_methods) r.methods = errorsim::parse_methods(*o.errorsim_methods, "--errorsim-methods");
    if (o.errorsim_activation) r.activations = errorsim::parse_activation(*o.errorsim_activation, "--errorsim-activation");
    if (o.errorsim_outlier) {
        if (!(*o.errorsim_outlier > 0.0 && *o.errorsim_outlier <= 1e4)) throw Error("--errorsim-outlier", "must be a ratio in (0, 10000]");
        r.layer.outlier_magnitude = *o.errorsim_outlier;
    }
    if (o.errorsim_seed) {
        if (*o.errorsim_seed < 0) throw Error("--errorsim-seed", "must be 0 or positive");
        r.layer.seed = static_cast<std::uint64_t>(*o.errorsim_seed);
    }
    if (o.errorsim_tokens) {
        if (*o.errorsim_tokens < 1 || *o.errorsim_tokens > 65536) throw Error("--errorsim-tokens", "must be 1 to 65536");
        r.layer.calibration_tokens = r.layer.heldout_tokens = *o.errorsim_tokens;
    }
    r.tensor = o.errorsim_tensor;
    r.activation_tensor = o.errorsim_activation_tensor;
    return r;
}

std::optional<std::filesystem::path> serving_fit_path(const CliOptions& o) {
    if (o.serving_fit) return *o.serving_fit == "none" ? std::nullopt : std::optional<std::filesystem::path>(*o.serving_fit);
    std::error_code ec;
    return std::filesystem::is_regular_file(serving_fit_file(), ec) ? std::optional<std::filesystem::path>(serving_fit_file()) : std::nullopt;
}

std::optional<engine::EngineCatalog> with_serving_fit(const CliOptions& o, const engine::EngineCatalog& base) {
    const std::optional<std::filesystem::path> fit = serving_fit_path(o);
    if (!fit) return std::nullopt;
    engine::EngineCatalog out = base;
    engine::apply_serving_fit(out, engine::parse_serving_fit(read_text_file(*fit, "--serving-fit"), fit->string()));
    return out;
}

const engine::EngineCatalog& engine_catalog() {
    static const engine::EngineCatalog catalog = engine::load_engine_catalog(engine_profiles_dir(), engine_fit_file());
    return catalog;
}

const engine::SpecCatalog& spec_catalog() {
    static const engine::SpecCatalog catalog = [] {
        std::error_code ec;
        const auto present = [&](const std::filesystem::path& p) { return std::filesystem::is_regular_file(p, ec) ? p.string() : std::string(); };
        return engine::load_spec_catalog(present(spec_engines_file()), present(spec_measurements_file()), present(spec_fit_file()));
    }();
    return catalog;
}

namespace {

std::optional<SpecPlanRequest> spec_plan_request(const CliOptions& o, const PlanRequest& r) {
    if (!o.spec) {
        if (o.spec_acceptance) throw Error("--spec-acceptance", "needs --spec METHOD:K");
        return std::nullopt;
    }
    SpecData data;
    data.catalog = &spec_catalog();
    data.models_dir = models_dir();
    return make_spec_plan_request(*o.spec, o.spec_acceptance, r, data);
}

}  // namespace

PlanRequest plan_request_from_options(const CliOptions& o) {
    PlanRequest r;
    r.model = resolve_model(o.model, models_dir());
    r.gpu = resolve_gpu(o.gpu, gpus_dir());
    const bool engine_priced = o.profile == "engine";
    if (engine_priced) {
        // The ridges and textbook crossovers stay the realistic roofline's; the steps are the engine's.
        r.efficiency = builtin_efficiency_profile("realistic");
        r.efficiency.name = "engine";
    } else if (o.profile == "measured") {
        const std::optional<Calibration> c = calibration_from_options(o);
        if (!c) throw Error("--profile", "'measured' needs --calibration FILE (written by quantplan --validate)");
        r.efficiency = c->profile;
    } else {
        r.efficiency = builtin_efficiency_profile(o.profile);
    }
    r.workload.batch = o.batch;
    r.workload.context_tokens = o.context;
    r.workload.kv = parse_kv_format(o.kv);
    r.workload.kv_auto = kv_name_is_auto(o.kv);
    r.workload.tensor_parallel = o.tp;
    r.workload.expert_parallel = o.ep;
    r.workload.data_parallel = o.dp;
    r.workload.nodes = o.nodes;
    r.workload.kernel = parse_kernel_quality(o.kernel);
    r.workload.mxfp4_mxfp8 = o.mxfp4_mxfp8;
    r.workload.engine.gpu_memory_utilization = o.gpu_mem_util;
    r.workload.engine.kv_cache_memory_bytes = static_cast<std::uint64_t>(o.kv_cache_memory_bytes);
    r.workload.engine.max_num_batched_tokens = o.max_num_batched_tokens;
    r.workload.engine.max_num_seqs = o.max_num_seqs;
    r.workload.gpu_p2p = o.gpu_p2p;
    if (o.max_num_seqs <= 0) throw Error("--max-num-seqs", "must be positive");
    if (o.num_scheduler_steps && !engine_priced) throw Error("--num-scheduler-steps", "prices vLLM V0's engine steps: it needs --profile engine (the default)");
    // The windows change how the requests stream, which only the capacity simulator runs.
    if (o.num_scheduler_steps && !o.serve) throw Error("--num-scheduler-steps", "is a serving setting: it applies to --serve (and --check of a benchmark result)");
    // A user corpus (--corpus FILE) refits the profiles with its points, so the bands are the
    // user's own; otherwise the committed fit is read.
    std::optional<engine::EngineCatalog> refitted;
    if (engine_priced && !o.corpus_files.empty()) {
        refitted = engine::load_engine_catalog(engine_profiles_dir(), "");
        engine::apply_fit(*refitted, run_fidelity(o, nullptr).parameters);
    }
    // The serving terms and bands of the bundled serving fit, another --fit-serving file, or none
    // (--serving-fit none; docs/capacity.md).
    const std::optional<engine::EngineCatalog> with_serving = with_serving_fit(o, refitted ? *refitted : engine_catalog());
    r.engine = engine::make_engine_setup(with_serving ? *with_serving : refitted ? *refitted : engine_catalog(), o.engine, engine_priced);
    // The defaults as they apply on this GPU (JSON `engine.defaults`); the plan takes them only
    // when the engine profile prices it.
    // vLLM V0 decides chunked prefill (and so the prefill chunk) by max_model_len: the context here.
    r.engine->profile.defaults = engine::defaults_for_run(r.engine->profile, r.gpu.id, r.gpu.memory_usable_bytes, r.engine->choice.version_asked,
                                                          r.workload.context_tokens);
    if (o.enforce_eager) r.engine->profile.defaults.cuda_graphs = false;
    // SGLang sizes its pool by mem_fraction_static (or --max-total-tokens); it has no such setting.
    if (o.kv_cache_memory_bytes > 0 && r.engine->profile.engine != "vllm")
        throw Error("--kv-cache-memory-bytes", "is a vLLM setting; " + r.engine->profile.title + " sizes its KV cache by --gpu-mem-util");
    if (engine_priced) {
        if (!r.engine->profile.fitted)
            throw Error("--profile", "'engine' needs a fitted parameter file (" + engine_fit_file().string() + "; run quantplan --fit-engines)");
        // The profile's defaults where the command line left the engine settings alone.
        const engine::EngineDefaults& d = r.engine->profile.defaults;
        if (!o.gpu_mem_util_given) r.workload.engine.gpu_memory_utilization = d.gpu_memory_utilization;
        if (!o.max_num_seqs_given) r.workload.engine.max_num_seqs = d.max_num_seqs;
        if (!o.max_num_batched_tokens_given) r.workload.engine.max_num_batched_tokens = d.max_num_batched_tokens;
        // SGLang budgets by mem_fraction_static: --gpu-mem-util sets it.
        if (r.engine->profile.memory.rule == engine::BudgetRule::StaticFraction && o.gpu_mem_util_given)
            r.engine->profile.defaults.mem_fraction_static = o.gpu_mem_util;
        r.workload.engine.kv_block_tokens = d.block_size_tokens;
        if (o.num_scheduler_steps) {
            // vLLM's --num-scheduler-steps: V0's multi-step scheduling (engine::multi_step_refusal).
            if (const std::string why = engine::multi_step_refusal(r.engine->profile, r.engine->choice.version_asked, *o.num_scheduler_steps); !why.empty())
                throw Error("--num-scheduler-steps", why);
            r.workload.engine.num_scheduler_steps = *o.num_scheduler_steps;
        }
        // A calibration file measured on this GPU replaces the fitted kernel curves it covers.
        if (const std::optional<Calibration> c = calibration_from_options(o); c && c->gpu_profile == r.gpu.id)
            r.engine->kernels = fidelity::calibrated_kernels(r.engine->kernels, *c, r.gpu);
    }
    if (o.schemes) r.schemes = parse_scheme_list(*o.schemes);
    r.spec = spec_plan_request(o, r);
    r.goal.goal = parse_goal(o.goal);
    r.goal.tolerance = parse_accuracy_tolerance(o.accuracy);
    r.goal.reasoning_heavy = o.reasoning;
    validate_workload(r.workload);
    return r;
}

int write_json_text(const std::string& text, const std::string& path, std::ostream& out, std::ostream& err) {
    if (path == "-") {
        out << text;
        out.flush();
        return 0;
    }
    try {
        write_file_atomically(path, text);
    } catch (const Error& e) {
        err << "quantplan: " << e.what() << "\n";
        return 2;
    }
    return 0;
}

int run_headless(const CliOptions& given, std::ostream& out, std::ostream& err) {
    try {
        CliOptions o = given;
        if (o.scenario) apply_scenario_file(o, *o.scenario);  // the same options as the report and the window take
        if (capacity_asked(o))
            err << "quantplan: note: traffic, SLO and price options are read by --serve and by --out (the report's Capacity section); "
                   "this plan does not use them\n";
        const PlanResult result = plan(plan_request_from_options(o));
        std::optional<errorsim::ErrorsimReport> lab;
        if (o.errorsim) lab = errorsim::run_errorsim(errorsim_request_from_options(o));
        const std::optional<Calibration> calibration = calibration_from_options(o);
        std::optional<MeasuredOverlay> measured;
        if (calibration) measured = measured_step_points(*calibration, result);
        if (!o.json_path) {
            print_table(result, out);
            if (measured) print_measured(*calibration, *measured, out);
            if (lab) out << "\n" << errorsim::errorsim_table(*lab);
            return 0;
        }
        nlohmann::json doc = plan_json(result);
        if (lab) doc["errorsim"] = errorsim::errorsim_json(*lab);
        if (measured) doc["measured"] = measured_json(*calibration, *measured, *o.calibration);
        if (o.per_tensor) {
            const std::vector<TensorInfo> inventory = tensor_inventory(result.request.model);
            for (std::size_t i = 0; i < result.schemes.size(); ++i) {
                const Scheme& s = result.schemes[i].costs.scheme;
                // `native`: each tensor as the checkpoint's quantization config stores it.
                const std::optional<NativeScheme> n = s.native ? std::optional(resolve_native_scheme(result.request.model, inventory)) : std::nullopt;
                const CheckpointBudget b = n && n->scheme_for ? checkpoint_budget(inventory, n->scheme_for, s, n->model_dtype, true)
                                                              : checkpoint_budget(inventory, s, n ? n->model_dtype : DType::Bf16, true);
                doc["schemes"][i]["checkpoint"]["tensors"] = to_json(b)["tensors"];
            }
        }
        return write_json_text(doc.dump(2) + "\n", *o.json_path, out, err);
    } catch (const Error& e) {
        err << "quantplan: " << e.what() << "\n";
        return 1;
    }
}

}  // namespace quantplan::app
