// --emit ENGINE and --emit-out DIR: from a plan to the command that starts the engine it assumed
// (docs/launch.md). Without traffic options the plan's chosen scheme (the decision's pick, or the
// one scheme given) is launched at the plan's TP; with --serve and a target rate, each configuration
// of the capacity recommendation; with --disagg, the prefill and the decode pool, each with its side
// of the KV transfer. Every argument is checked against the engine version's parser data
// (assets/engines/args/).
#include <algorithm>
#include <iostream>

#include "app/commands.h"
#include "app/data_paths.h"
#include "app/headless.h"
#include "app/scenario.h"
#include "core/base/error.h"
#include "core/base/text_file.h"
#include "core/checkpoint/model_config_json.h"
#include "core/engine/step_model.h"
#include "core/launch/plan_launch.h"
#include "core/report/report_json.h"

namespace quantplan::app {
namespace {

void print_launch(const launch::Launch& l, const launch::EngineDeployment& d, std::ostream& out) {
    out << "# " << l.configuration << ", " << (l.engine == "vllm" ? "vLLM " : "SGLang ") << l.version << "\n";
    const launch::CheckpointPlan& c = l.checkpoint;
    out << "\n## Checkpoint (" << c.bytes << " bytes)\n";
    if (c.kind == "model") out << c.repo << ": the model as published\n";
    if (c.kind == "published") out << c.repo << ": published (" << c.source << ")\n";
    if (c.kind == "recipe") {
        out << "none published for this scheme: make it with " << c.tool << " (" << c.recipe_file << " below), into " << c.output_dir << "\n";
        out << "calibration: " << c.calibration << "\n\n" << c.recipe;
    }
    if (!c.kernel.empty()) out << "kernel: " << c.kernel << "\n";
    for (const std::string& n : c.notes) out << "note: " << n << "\n";
    out << "\n## Launch command\n" << launch::shell_command(l.argv, l.env);
    out << "\nwhat each setting carries from the plan:\n";
    for (const std::string& s : l.settings_from_plan) out << "  " << s << "\n";
    for (const std::string& n : l.notes) out << "note: " << n << "\n";
    out << "\n## docker run (" << l.image << ")\n" << launch::docker_run(l, d);
    out << "\n## Kubernetes (" << l.replicas << (l.replicas == 1 ? " replica" : " replicas") << ", " << l.gpus_per_replica
        << " GPU each, readiness on " << l.health_path << ")\n"
        << launch::kubernetes_yaml(l, l.configuration);
}

}  // namespace

launch::Launch configuration_launch(const CapacityRun& run, const serve::Configuration& c, const launch::LaunchData& data, const std::string& release) {
    CliOptions oc = run.options;
    oc.gpu = c.gpu;
    oc.tp = c.tp;
    oc.schemes = c.scheme;
    oc.engine = data.args.engine + (release.empty() ? "" : "@" + release);
    const PlanResult priced = plan(plan_request_from_options(oc));
    return launch::make_launch(launch::launch_request(priced.request, priced.schemes.front(), data, run.options.model, release, run.options.context,
                                                      c.replicas, run.options.prefix > 0),
                               data.args, data.deployment, data.published, data.gpus);
}

int run_emit(const CliOptions& given, std::ostream& out, std::ostream& err) {
    try {
        CliOptions o = given;
        if (o.scenario) apply_scenario_file(o, *o.scenario);
        if (o.emit_out && o.emit_out->empty()) throw Error("--emit-out", "needs a folder");
        const auto [engine_asked, version] = launch::split_engine_argument(o.engine);
        const std::string engine = o.emit_engine ? *o.emit_engine : engine_asked;
        if (engine.empty()) throw Error("--emit", "needs an engine: vllm or sglang");
        if (o.engine_given && engine_asked != engine)
            throw Error("--emit", "'" + engine + "' but the plan is priced with --engine " + o.engine + "; give the same engine to both");
        const launch::LaunchData data = launch::load_launch_data(data_dir(), engine);
        const std::string release = data.args.versions[launch::resolve_args_version(data.args, version)].version;
        o.engine = engine + "@" + release;
        o.engine_given = true;

        std::vector<launch::Launch> launches;
        nlohmann::json doc;
        if (o.disagg) {
            // Disaggregated serving: both pools, each with its side of the KV transfer.
            const DisaggRun run = compute_disagg(o);
            const serve::DisaggSpec& spec = run.comparison.spec;
            doc = {{"disagg", run.json}};
            doc["launch"] = nlohmann::json::array();
            for (const serve::DisaggPool* pool : {&spec.prefill, &spec.decode}) {
                const bool prefill = pool == &spec.prefill;
                CliOptions oc = run.options;
                oc.gpu = pool->gpu;
                oc.tp = pool->tp;
                oc.schemes = pool->scheme;
                const PlanResult priced = plan(plan_request_from_options(oc));
                launch::LaunchRequest lr = launch::launch_request(priced.request, priced.schemes.front(), data, run.options.model, release,
                                                                  run.options.context, pool->instances, false);
                lr.pd_role = prefill ? "prefill" : "decode";
                lr.pd_connector = run.comparison.connector.id;
                launches.push_back(launch::make_launch(lr, data.args, data.deployment, data.published, data.gpus));
                const nlohmann::json l = launch::launch_json(launches.back());
                doc["disagg"]["pools"][prefill ? "prefill" : "decode"]["launch"] = l;
                doc["launch"].push_back(l);
            }
        } else if (capacity_asked(o)) {
            const CapacityRun run = run_capacity(o);
            if (!run.target) throw Error("--emit", "with traffic options it launches the capacity recommendation: give --target-rate or --rate");
            if (run.plan.ranked.empty()) throw Error("--emit", "no configuration of the recommendation meets the SLOs at the target rate: nothing to launch");
            doc = capacity_document(run);
            for (std::size_t i = 0; i < run.plan.ranked.size(); ++i) {
                launches.push_back(configuration_launch(run, run.plan.ranked[i], data, release));
                doc["serve_recommendation"]["ranked"][i]["launch"] = launch::launch_json(launches.back());
            }
        } else {
            const PlanResult result = plan(plan_request_from_options(o));
            const std::string chosen = result.schemes.size() == 1 ? scheme_name(result.schemes.front().costs.scheme) : result.decision.recommendation;
            if (chosen.empty()) throw Error("--emit", "no scheme of the plan is within the accuracy tolerance: nothing to launch");
            const auto it = std::find_if(result.schemes.begin(), result.schemes.end(),
                                         [&](const SchemeResult& s) { return scheme_name(s.costs.scheme) == chosen; });
            if (it == result.schemes.end()) throw Error("--emit", "the plan's pick '" + chosen + "' is not among its schemes");
            if (!it->admission.fits)
                throw Error("--emit", chosen + " does not fit on " + result.request.gpu.id + " at TP " + std::to_string(result.request.workload.tensor_parallel) +
                                          ": no plan that fits to launch (" + it->admission.reason + ")");
            launches.push_back(launch::make_launch(
                launch::launch_request(result.request, *it, data, o.model, release, result.request.workload.context_tokens, 1, o.prefix > 0),
                data.args, data.deployment, data.published, data.gpus));
            doc = plan_json(result);
            doc["launch"] = nlohmann::json::array({launch::launch_json(launches.back())});
        }

        if (o.emit_out) {
            launch::write_emit_folder(*o.emit_out, launches, data.deployment);
            out << "wrote " << launches.size() << (launches.size() == 1 ? " launch" : " launches") << " to " << *o.emit_out << "\n";
        }
        if (o.json_path) return write_json_text(doc.dump(2) + "\n", *o.json_path, out, err);
        if (!o.emit_out)
            for (std::size_t i = 0; i < launches.size(); ++i) {
                if (i) out << "\n";
                print_launch(launches[i], data.deployment, out);
            }
        return 0;
    } catch (const Error& e) {
        err << "quantplan: " << e.what() << "\n";
        return 1;
    }
}

}  // namespace quantplan::app
