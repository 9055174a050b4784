#include "ui/window/planner_setup.h"

#include <cmath>
#include <set>
#include <string>

#include <QtCore/QJsonArray>

#include "core/base/error.h"
#include "core/errorsim/errorsim_request.h"
#include "core/fidelity/fit.h"
#include "core/roofline/decision.h"
#include "core/scheme/scheme.h"

namespace quantplan::ui {
namespace {

// Keys a step may carry besides the setup's own.
const std::set<QString>& descriptive_keys() {
    static const std::set<QString> keys = {QStringLiteral("title"), QStringLiteral("note"), QStringLiteral("panel")};
    return keys;
}

// Every key setup_from_json() understands.
const std::set<QString>& setup_keys() {
    static const std::set<QString> keys = {
        QStringLiteral("model"), QStringLiteral("gpu"), QStringLiteral("schemes"), QStringLiteral("batch"),
        QStringLiteral("context"), QStringLiteral("kv"), QStringLiteral("kernel"), QStringLiteral("profile"), QStringLiteral("engine"),
        QStringLiteral("calibration"), QStringLiteral("gpu_mem_util"), QStringLiteral("tp"), QStringLiteral("ep"), QStringLiteral("dp"), QStringLiteral("nodes"), QStringLiteral("gpu_p2p"), QStringLiteral("goal"), QStringLiteral("accuracy"),
        QStringLiteral("reasoning"), QStringLiteral("max_num_batched_tokens"), QStringLiteral("max_num_seqs"), QStringLiteral("enforce_eager"),
        QStringLiteral("mxfp4_mxfp8"), QStringLiteral("spec"), QStringLiteral("spec_acceptance"),
        QStringLiteral("errorsim_formats"), QStringLiteral("errorsim_methods"), QStringLiteral("errorsim_activation"),
        QStringLiteral("errorsim_outlier"), QStringLiteral("errorsim_seed")};
    return keys;
}

std::string field_name(const QString& where, const QString& key) {
    return (where.isEmpty() ? key : where + QStringLiteral(": ") + key).toStdString();
}

QString string_value(const QJsonObject& json, const QString& key, const QString& where) {
    const QJsonValue v = json.value(key);
    if (!v.isString()) throw Error(field_name(where, key), "must be a string");
    return v.toString();
}

// An integer given as a JSON number; refuses fractions and values beyond 2^53 (not exact in JSON).
std::int64_t integer_value(const QJsonObject& json, const QString& key, const QString& where) {
    constexpr double kLargestExactInteger = 9007199254740992.0;  // 2^53
    const QJsonValue v = json.value(key);
    if (!v.isDouble()) throw Error(field_name(where, key), "must be a number");
    const double d = v.toDouble();
    if (!std::isfinite(d) || std::floor(d) != d || std::fabs(d) > kLargestExactInteger)
        throw Error(field_name(where, key), "must be an integer");
    return static_cast<std::int64_t>(d);
}

double number_value(const QJsonObject& json, const QString& key, const QString& where) {
    const QJsonValue v = json.value(key);
    if (!v.isDouble() || !std::isfinite(v.toDouble())) throw Error(field_name(where, key), "must be a number");
    return v.toDouble();
}

// A list given either as a JSON array of strings or as one comma-separated string (the command
// line's form).
QStringList list_value(const QJsonObject& json, const QString& key, const QString& where) {
    const QJsonValue v = json.value(key);
    QStringList out;
    if (v.isString()) {
        for (const QString& part : v.toString().split(QLatin1Char(','), Qt::SkipEmptyParts)) out << part.trimmed();
    } else if (v.isArray()) {
        for (const QJsonValue& item : v.toArray()) {
            if (!item.isString()) throw Error(field_name(where, key), "must list strings");
            out << item.toString().trimmed();
        }
    } else {
        throw Error(field_name(where, key), "must be a comma-separated string or an array of strings");
    }
    out.removeAll(QString());
    return out;
}

void check_range(std::int64_t value, std::int64_t lo, std::int64_t hi, const QString& where, const QString& key) {
    if (value < lo || value > hi)
        throw Error(field_name(where, key), std::to_string(value) + " is outside the window's range " + std::to_string(lo) + " to " +
                                                 std::to_string(hi));
}

// The error-lab methods as the command line spells them ("gptq,awq,smoothquant").
QStringList methods_of(const ErrorLabSetup& lab) {
    QStringList m;
    if (lab.gptq) m << QStringLiteral("gptq");
    if (lab.awq) m << QStringLiteral("awq");
    if (lab.smoothquant) m << QStringLiteral("smoothquant");
    return m;
}

}  // namespace

PlannerSetup default_setup() {
    PlannerSetup s;
    for (const std::string& name : default_serving_scheme_names()) s.schemes << QString::fromStdString(name);
    return s;
}

QJsonObject setup_to_json(const PlannerSetup& s) {
    QJsonObject o;
    o.insert(QStringLiteral("model"), s.model);
    o.insert(QStringLiteral("gpu"), s.gpu);
    o.insert(QStringLiteral("schemes"), s.schemes.join(QLatin1Char(',')));
    o.insert(QStringLiteral("batch"), static_cast<double>(s.batch));
    o.insert(QStringLiteral("context"), static_cast<double>(s.context_tokens));
    o.insert(QStringLiteral("kv"), s.kv);
    o.insert(QStringLiteral("kernel"), s.kernel);
    o.insert(QStringLiteral("profile"), s.profile);
    o.insert(QStringLiteral("engine"), s.engine);
    o.insert(QStringLiteral("calibration"), s.calibration);
    o.insert(QStringLiteral("gpu_mem_util"), s.gpu_memory_utilization);
    o.insert(QStringLiteral("tp"), static_cast<double>(s.tensor_parallel));
    o.insert(QStringLiteral("ep"), s.expert_parallel);
    o.insert(QStringLiteral("dp"), static_cast<double>(s.data_parallel));
    o.insert(QStringLiteral("nodes"), static_cast<double>(s.nodes));
    o.insert(QStringLiteral("gpu_p2p"), s.gpu_p2p);
    o.insert(QStringLiteral("goal"), s.goal);
    o.insert(QStringLiteral("accuracy"), s.accuracy);
    o.insert(QStringLiteral("reasoning"), s.reasoning_heavy);
    o.insert(QStringLiteral("max_num_batched_tokens"), static_cast<double>(s.max_num_batched_tokens));
    o.insert(QStringLiteral("max_num_seqs"), static_cast<double>(s.max_num_seqs));
    o.insert(QStringLiteral("enforce_eager"), s.enforce_eager);
    o.insert(QStringLiteral("mxfp4_mxfp8"), s.mxfp4_mxfp8);
    o.insert(QStringLiteral("spec"), s.spec);
    o.insert(QStringLiteral("spec_acceptance"), s.spec_acceptance);
    o.insert(QStringLiteral("errorsim_formats"), s.error_lab.weight_formats.join(QLatin1Char(',')));
    o.insert(QStringLiteral("errorsim_methods"), methods_of(s.error_lab).join(QLatin1Char(',')));
    o.insert(QStringLiteral("errorsim_activation"), s.error_lab.activation);
    o.insert(QStringLiteral("errorsim_outlier"), s.error_lab.outlier_magnitude);
    o.insert(QStringLiteral("errorsim_seed"), static_cast<double>(s.error_lab.seed));
    return o;
}

PlannerSetup setup_from_json(const QJsonObject& json, const PlannerSetup& base, const QString& where) {
    PlannerSetup s = base;
    for (auto it = json.begin(); it != json.end(); ++it) {
        if (!setup_keys().count(it.key()) && !descriptive_keys().count(it.key()))
            throw Error(field_name(where, it.key()), "unknown key (docs/gui.md lists the keys)");
    }
    const auto has = [&](const char* key) { return json.contains(QLatin1String(key)); };
    if (has("model")) s.model = string_value(json, QStringLiteral("model"), where);
    if (has("gpu")) s.gpu = string_value(json, QStringLiteral("gpu"), where);
    if (has("schemes")) s.schemes = list_value(json, QStringLiteral("schemes"), where);
    if (has("batch")) s.batch = integer_value(json, QStringLiteral("batch"), where);
    if (has("context")) s.context_tokens = integer_value(json, QStringLiteral("context"), where);
    if (has("kv")) s.kv = string_value(json, QStringLiteral("kv"), where);
    if (has("kernel")) s.kernel = string_value(json, QStringLiteral("kernel"), where);
    if (has("profile")) s.profile = string_value(json, QStringLiteral("profile"), where);
    if (has("engine")) s.engine = string_value(json, QStringLiteral("engine"), where);
    if (has("calibration")) s.calibration = string_value(json, QStringLiteral("calibration"), where);
    if (has("gpu_mem_util")) s.gpu_memory_utilization = number_value(json, QStringLiteral("gpu_mem_util"), where);
    if (has("tp")) s.tensor_parallel = integer_value(json, QStringLiteral("tp"), where);
    if (has("ep")) {
        // true, or a number as --ep takes it (1: off; above 1: on, over the TP GPUs).
        const QJsonValue v = json.value(QStringLiteral("ep"));
        if (v.isBool()) s.expert_parallel = v.toBool();
        else s.expert_parallel = integer_value(json, QStringLiteral("ep"), where) > 1;
    }
    if (has("dp")) s.data_parallel = integer_value(json, QStringLiteral("dp"), where);
    if (has("nodes")) s.nodes = integer_value(json, QStringLiteral("nodes"), where);
    if (has("gpu_p2p")) s.gpu_p2p = string_value(json, QStringLiteral("gpu_p2p"), where);
    if (has("goal")) s.goal = string_value(json, QStringLiteral("goal"), where);
    if (has("accuracy")) s.accuracy = string_value(json, QStringLiteral("accuracy"), where);
    if (has("reasoning")) {
        if (!json.value(QStringLiteral("reasoning")).isBool()) throw Error(field_name(where, QStringLiteral("reasoning")), "must be true or false");
        s.reasoning_heavy = json.value(QStringLiteral("reasoning")).toBool();
    }
    if (has("max_num_batched_tokens"))
        s.max_num_batched_tokens = integer_value(json, QStringLiteral("max_num_batched_tokens"), where);
    if (has("max_num_seqs")) s.max_num_seqs = integer_value(json, QStringLiteral("max_num_seqs"), where);
    if (has("spec")) s.spec = json.value(QStringLiteral("spec")).isNull() ? QString() : string_value(json, QStringLiteral("spec"), where);
    if (has("spec_acceptance")) {
        const QJsonValue v = json.value(QStringLiteral("spec_acceptance"));
        s.spec_acceptance = v.isNull() ? QString() : v.isDouble() ? QString::number(v.toDouble(), 'g', 17) : string_value(json, QStringLiteral("spec_acceptance"), where);
    }
    if (has("mxfp4_mxfp8")) {
        if (!json.value(QStringLiteral("mxfp4_mxfp8")).isBool())
            throw Error(field_name(where, QStringLiteral("mxfp4_mxfp8")), "must be true or false");
        s.mxfp4_mxfp8 = json.value(QStringLiteral("mxfp4_mxfp8")).toBool();
    }
    if (has("enforce_eager")) {
        if (!json.value(QStringLiteral("enforce_eager")).isBool())
            throw Error(field_name(where, QStringLiteral("enforce_eager")), "must be true or false");
        s.enforce_eager = json.value(QStringLiteral("enforce_eager")).toBool();
    }
    if (has("errorsim_formats")) s.error_lab.weight_formats = list_value(json, QStringLiteral("errorsim_formats"), where);
    if (has("errorsim_methods")) {
        const QStringList methods = list_value(json, QStringLiteral("errorsim_methods"), where);
        s.error_lab.gptq = s.error_lab.awq = s.error_lab.smoothquant = false;
        for (const QString& m : methods) {
            const QString lower = m.toLower();
            if (lower == QLatin1String("gptq")) s.error_lab.gptq = true;
            else if (lower == QLatin1String("awq")) s.error_lab.awq = true;
            else if (lower == QLatin1String("smoothquant")) s.error_lab.smoothquant = true;
            else if (lower != QLatin1String("rtn") && lower != QLatin1String("none"))
                throw Error(field_name(where, QStringLiteral("errorsim_methods")),
                            "unknown method '" + m.toStdString() + "' (gptq, awq, smoothquant, rtn)");
        }
    }
    if (has("errorsim_activation")) s.error_lab.activation = string_value(json, QStringLiteral("errorsim_activation"), where);
    if (has("errorsim_outlier")) s.error_lab.outlier_magnitude = number_value(json, QStringLiteral("errorsim_outlier"), where);
    if (has("errorsim_seed")) s.error_lab.seed = integer_value(json, QStringLiteral("errorsim_seed"), where);
    validate_setup(s, where);
    return s;
}

void validate_setup(const PlannerSetup& s, const QString& where) {
    if (!s.spec.isEmpty()) {
        try {
            const engine::SpecRequest r = engine::parse_spec(s.spec.toStdString(), "spec");
            if (!s.spec_acceptance.isEmpty()) (void)engine::parse_acceptance(s.spec_acceptance.toStdString(), r.k, "spec_acceptance");
        } catch (const Error& e) {
            throw Error(field_name(where, QString::fromStdString(e.field())), e.what());
        }
    } else if (!s.spec_acceptance.isEmpty()) {
        throw Error(field_name(where, QStringLiteral("spec_acceptance")), "needs spec (a speculation method and K)");
    }
    if (s.model.trimmed().isEmpty()) throw Error(field_name(where, QStringLiteral("model")), "must not be empty");
    if (s.gpu.trimmed().isEmpty()) throw Error(field_name(where, QStringLiteral("gpu")), "must not be empty");
    if (s.schemes.isEmpty()) throw Error(field_name(where, QStringLiteral("schemes")), "select at least one scheme");
    for (const QString& name : s.schemes) {
        try {
            (void)parse_scheme(name.toStdString());
        } catch (const Error& e) {
            throw Error(field_name(where, QStringLiteral("schemes")), e.what());
        }
    }
    check_range(s.batch, kMinBatch, kMaxBatch, where, QStringLiteral("batch"));
    check_range(s.context_tokens, kMinContextTokens, kMaxContextTokens, where, QStringLiteral("context"));
    check_range(s.tensor_parallel, 1, 8, where, QStringLiteral("tp"));
    check_range(s.data_parallel, 1, 64, where, QStringLiteral("dp"));
    check_range(s.nodes, 1, 64, where, QStringLiteral("nodes"));
    (void)parse_gpu_p2p(s.gpu_p2p.toStdString(), field_name(where, QStringLiteral("gpu_p2p")));
    if (!(s.gpu_memory_utilization > 0.0 && s.gpu_memory_utilization <= 1.0))
        throw Error(field_name(where, QStringLiteral("gpu_mem_util")), "must be in (0, 1], got " + std::to_string(s.gpu_memory_utilization));
    if (s.max_num_batched_tokens <= 0) throw Error(field_name(where, QStringLiteral("max_num_batched_tokens")), "must be positive");
    if (s.max_num_seqs <= 0) throw Error(field_name(where, QStringLiteral("max_num_seqs")), "must be positive");
    const auto rethrow_as = [&](const char* key, auto&& parse) {
        try {
            parse();
        } catch (const Error& e) {
            throw Error(field_name(where, QLatin1String(key)), e.what());
        }
    };
    rethrow_as("kv", [&] { (void)parse_kv_format(s.kv.toStdString()); });
    rethrow_as("kernel", [&] { (void)parse_kernel_quality(s.kernel.toStdString()); });
    if (s.profile == QStringLiteral("measured")) {
        if (s.calibration.isEmpty())
            throw Error(field_name(where, QStringLiteral("profile")), "'measured' needs a calibration file (File > Open calibration, written by quantplan --validate)");
    } else if (s.profile != QStringLiteral("engine")) {
        rethrow_as("profile", [&] { (void)builtin_efficiency_profile(s.profile.toStdString()); });
    }
    if (s.engine.isEmpty()) throw Error(field_name(where, QStringLiteral("engine")), "must name an engine (vllm, sglang, optionally @VERSION)");
    rethrow_as("goal", [&] { (void)parse_goal(s.goal.toStdString()); });
    rethrow_as("accuracy", [&] { (void)parse_accuracy_tolerance(s.accuracy.toStdString()); });
    if (!s.error_lab.weight_formats.isEmpty())
        rethrow_as("errorsim_formats", [&] { (void)errorsim::parse_weight_formats(s.error_lab.weight_formats.join(QLatin1Char(',')).toStdString(), "errorsim_formats"); });
    rethrow_as("errorsim_activation", [&] { (void)errorsim::parse_activation(s.error_lab.activation.toStdString(), "errorsim_activation"); });
    if (s.error_lab.awq && s.error_lab.smoothquant)
        throw Error(field_name(where, QStringLiteral("errorsim_methods")), "awq and smoothquant exclude each other (both rescale input channels)");
    if (!(s.error_lab.outlier_magnitude >= kMinOutlierMagnitude && s.error_lab.outlier_magnitude <= kMaxOutlierMagnitude))
        throw Error(field_name(where, QStringLiteral("errorsim_outlier")), "must be between 1 and 200");
    if (s.error_lab.seed < 0) throw Error(field_name(where, QStringLiteral("errorsim_seed")), "must not be negative");
}

PlanRequest plan_request(const PlannerSetup& s, const ModelConfig& model, const GpuProfile& gpu, const Calibration* calibration,
                         const engine::EngineCatalog* engines, const SpecData* spec_data) {
    validate_setup(s);
    PlanRequest r;
    r.model = model;
    r.gpu = gpu;
    const bool engine_priced = s.profile == QStringLiteral("engine");
    if (engine_priced) {
        if (!engines) throw Error("profile", "'engine' needs the bundled engine profiles (assets/engines/profiles/)");
        r.efficiency = builtin_efficiency_profile("realistic");  // the ridges' textbook roofline
        r.efficiency.name = "engine";
    } else if (s.profile == QStringLiteral("measured")) {
        if (!calibration) throw Error("profile", "'measured' needs a calibration file (File > Open calibration)");
        r.efficiency = calibration->profile;
    } else {
        r.efficiency = builtin_efficiency_profile(s.profile.toStdString());
    }
    r.workload.batch = s.batch;
    r.workload.context_tokens = s.context_tokens;
    r.workload.kv = parse_kv_format(s.kv.toStdString());
    r.workload.kv_auto = kv_name_is_auto(s.kv.toStdString());
    r.workload.tensor_parallel = s.tensor_parallel;
    // Data-parallel engines only share experts (a dense model's engines are replicas): ignored otherwise.
    const bool ep = s.expert_parallel && model.is_moe();
    r.workload.data_parallel = ep ? s.data_parallel : 1;
    if (ep && s.tensor_parallel * r.workload.data_parallel > 1) r.workload.expert_parallel = s.tensor_parallel * r.workload.data_parallel;
    r.workload.nodes = s.nodes;
    r.workload.gpu_p2p = parse_gpu_p2p(s.gpu_p2p.toStdString(), "gpu_p2p");
    r.workload.kernel = parse_kernel_quality(s.kernel.toStdString());
    r.workload.mxfp4_mxfp8 = s.mxfp4_mxfp8;
    r.workload.engine.gpu_memory_utilization = s.gpu_memory_utilization;
    r.workload.engine.max_num_batched_tokens = s.max_num_batched_tokens;
    r.workload.engine.max_num_seqs = s.max_num_seqs;
    for (const QString& name : s.schemes) r.schemes.push_back(parse_scheme(name.toStdString()));
    // The default set, as on the command line, adds the checkpoint as its config.json declares it.
    if (model.declared_quantization && s.schemes == default_setup().schemes) r.schemes.push_back(parse_scheme("native"));
    r.goal.goal = parse_goal(s.goal.toStdString());
    r.goal.tolerance = parse_accuracy_tolerance(s.accuracy.toStdString());
    r.goal.reasoning_heavy = s.reasoning_heavy;
    r.crossover_max_batch = kMaxBatch;
    if (engines) {
        try {
            r.engine = engine::make_engine_setup(*engines, s.engine.toStdString(), engine_priced);
        } catch (const Error& e) {
            throw Error("engine", e.what());
        }
        r.engine->profile.defaults =
            engine::defaults_for_run(r.engine->profile, gpu.id, gpu.memory_usable_bytes, r.engine->choice.version_asked, r.workload.context_tokens);
        if (s.enforce_eager) r.engine->profile.defaults.cuda_graphs = false;
        if (engine_priced) {
            if (!r.engine->profile.fitted) throw Error("profile", "'engine' needs a fitted parameter file (run quantplan --fit-engines)");
            // The profile's defaults where the setup leaves the engine settings at the window's defaults.
            const engine::EngineDefaults& d = r.engine->profile.defaults;
            const PlannerSetup defaults;
            if (s.gpu_memory_utilization == defaults.gpu_memory_utilization) r.workload.engine.gpu_memory_utilization = d.gpu_memory_utilization;
            if (s.max_num_seqs == defaults.max_num_seqs) r.workload.engine.max_num_seqs = d.max_num_seqs;
            if (s.max_num_batched_tokens == defaults.max_num_batched_tokens) r.workload.engine.max_num_batched_tokens = d.max_num_batched_tokens;
            r.workload.engine.kv_block_tokens = d.block_size_tokens;
            // A calibration file measured on this GPU replaces the fitted kernel curves it covers.
            if (calibration && calibration->gpu_profile == gpu.id)
                r.engine->kernels = fidelity::calibrated_kernels(r.engine->kernels, *calibration, gpu);
        }
    }
    if (!s.spec.isEmpty()) {
        if (!spec_data) throw Error("spec", "speculative decoding needs the bundled data (assets/engines/speculative/)");
        const std::optional<std::string> acceptance = s.spec_acceptance.isEmpty() ? std::nullopt : std::optional<std::string>(s.spec_acceptance.toStdString());
        r.spec = make_spec_plan_request(s.spec.toStdString(), acceptance, r, *spec_data);
    }
    validate_workload(r.workload);
    return r;
}

}  // namespace quantplan::ui
