// The planner window's parts that hold no window: the setup value and its JSON, scenarios (every
// bundled one parses and plans), the log slider's stops, the item models (each under
// QAbstractItemModelTester, cells equal to core's results), CSV export, background jobs with
// cancellation, and the checkpoint folder scan.
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <QtCore/QDir>
#include <QtCore/QFile>
#include <QtCore/QJsonDocument>
#include <QtCore/QJsonObject>
#include <QtCore/QTemporaryDir>
#include <QtTest/QAbstractItemModelTester>
#include <QtTest/QSignalSpy>
#include <QtWidgets/QSlider>
#include <QtWidgets/QSpinBox>

#include "core/base/error.h"
#include "core/checkpoint/model_config_json.h"
#include "core/checkpoint/safetensors.h"
#include "core/engine/engine_profile.h"
#include "core/errorsim/errorsim_request.h"
#include "core/plan/plan.h"
#include "ui/window/background_job.h"
#include "ui/window/checkpoint_scan.h"
#include "ui/window/error_panel.h"
#include "ui/window/glossary.h"
#include "ui/window/kv_what_if.h"
#include "ui/window/log_slider.h"
#include "ui/window/planner_setup.h"
#include "ui/window/scenario.h"
#include "ui/window/table_models.h"

using namespace quantplan;
using namespace quantplan::ui;

namespace {

const std::filesystem::path kSource = QUANTPLAN_SOURCE_DIR;

// How long a background job may take in these tests before it counts as hung (a plan of every
// KV format on the default model takes milliseconds; the error-lab ladders well under a second).
constexpr int kJobTimeoutMs = 60000;

// A job context that records progress and can be cancelled from the test.
struct TestContext : JobContext {
    std::atomic<bool> stop{false};
    int reports = 0;
    bool cancelled() const override { return stop.load(); }
    void report(int, const QString&) override { ++reports; }
};

// Collects the warnings QAbstractItemModelTester emits (FailureReportingMode::Warning) so that a
// test can require none.
struct ModelWarnings {
    ModelWarnings() {
        messages().clear();
        previous = qInstallMessageHandler(&ModelWarnings::handler);
    }
    ~ModelWarnings() { qInstallMessageHandler(previous); }
    static QStringList& messages() {
        static QStringList list;
        return list;
    }
    static void handler(QtMsgType type, const QMessageLogContext& context, const QString& message) {
        if (type != QtDebugMsg && context.category && QByteArray(context.category).startsWith("qt.modeltest")) messages() << message;
    }
    QtMessageHandler previous = nullptr;
};

// The bundled engine profiles with their fit, as the window loads them (the default profile is `engine`).
const engine::EngineCatalog& bundled_engines() {
    static const engine::EngineCatalog catalog =
        engine::load_engine_catalog(kSource / "assets" / "engines" / "profiles", kSource / "assets" / "engines" / "fit" / "engine-fit.json");
    return catalog;
}

PlanResult plan_of(const PlannerSetup& s) {
    return plan(plan_request(s, resolve_model(s.model.toStdString(), kSource / "models"), resolve_gpu(s.gpu.toStdString(), kSource / "assets" / "gpus"), nullptr,
                             &bundled_engines()));
}

QJsonObject json_of(const char* text) { return QJsonDocument::fromJson(QByteArray(text)).object(); }

}  // namespace

BOOST_AUTO_TEST_SUITE(window_setup)

BOOST_AUTO_TEST_CASE(default_setup_is_the_six_serving_schemes_and_round_trips_through_json) {
    const PlannerSetup d = default_setup();
    BOOST_TEST(d.schemes.size() == 6);
    BOOST_TEST(d.schemes.join(QLatin1Char(',')).toStdString() == "bf16,w8a16-int8,w4a16-g128,w4a16-g32,w8a8-int8,w8a8-fp8");
    PlannerSetup s = d;
    s.model = QStringLiteral("llama-3.1-70b");
    s.batch = 1024;
    s.context_tokens = 128;
    s.kv = QStringLiteral("fp8");
    s.kernel = QStringLiteral("generic");
    s.tensor_parallel = 4;
    s.gpu_memory_utilization = 0.85;
    s.error_lab.gptq = true;
    s.error_lab.awq = true;
    s.error_lab.outlier_magnitude = 100;
    s.error_lab.activation = QStringLiteral("fp8");
    s.enforce_eager = true;
    s.mxfp4_mxfp8 = true;
    const PlannerSetup back = setup_from_json(setup_to_json(s), PlannerSetup{}, QStringLiteral("test"));
    BOOST_TEST((back == s));
}

// Each row: a JSON object over the default setup, and the key the error must name.
struct RefusedCase {
    const char* json;
    const char* key;
};
std::ostream& operator<<(std::ostream& os, const RefusedCase& c) { return os << c.json; }

const RefusedCase kRefused[] = {
    {R"({"batch": 0})", "batch"},
    {R"({"batch": 4097})", "batch"},
    {R"({"batch": 2.5})", "batch"},
    {R"({"batch": "8"})", "batch"},
    {R"({"context": 127})", "context"},
    {R"({"context": 131073})", "context"},
    {R"({"gpu_mem_util": 0})", "gpu_mem_util"},
    {R"({"gpu_mem_util": 1.5})", "gpu_mem_util"},
    {R"({"tp": 9})", "tp"},
    {R"({"kv": "int3"})", "kv"},
    {R"({"kernel": "fast"})", "kernel"},
    {R"({"profile": "measured-ish"})", "profile"},
    {R"({"schemes": "w4a16-g0"})", "schemes"},
    {R"({"schemes": ""})", "schemes"},
    {R"({"schemes": [1, 2]})", "schemes"},
    {R"({"goal": "fastest"})", "goal"},
    {R"({"reasoning": "yes"})", "reasoning"},
    {R"({"enforce_eager": 1})", "enforce_eager"},
    {R"({"mxfp4_mxfp8": "on"})", "mxfp4_mxfp8"},
    {R"({"gpu_p2p": "maybe"})", "gpu_p2p"},
    {R"({"gpu_p2p": true})", "gpu_p2p"},
    {R"({"errorsim_methods": "awq,smoothquant"})", "errorsim_methods"},
    {R"({"errorsim_methods": "magic"})", "errorsim_methods"},
    {R"({"errorsim_outlier": 0.5})", "errorsim_outlier"},
    {R"({"errorsim_activation": "int42"})", "errorsim_activation"},
    {R"({"errorsim_formats": "int99"})", "errorsim_formats"},
    {R"({"batchsize": 8})", "batchsize"},
};

BOOST_DATA_TEST_CASE(a_setup_refuses_bad_values_naming_the_key, boost::unit_test::data::make(kRefused), c) {
    try {
        (void)setup_from_json(json_of(c.json), default_setup(), QStringLiteral("file.json"));
        BOOST_ERROR("accepted " << c.json);
    } catch (const Error& e) {
        BOOST_TEST(e.field() == std::string("file.json: ") + c.key, "field '" << e.field() << "', message: " << e.what());
    }
}

BOOST_AUTO_TEST_CASE(schemes_may_be_an_array_or_the_command_line_string) {
    const PlannerSetup a = setup_from_json(json_of(R"({"schemes": ["bf16", " w4a16-g128 "]})"), default_setup(), {});
    const PlannerSetup b = setup_from_json(json_of(R"({"schemes": "bf16, w4a16-g128"})"), default_setup(), {});
    BOOST_TEST(a.schemes.join(QLatin1Char(',')).toStdString() == "bf16,w4a16-g128");
    BOOST_TEST((a.schemes == b.schemes));
}

BOOST_AUTO_TEST_CASE(plan_request_carries_every_control) {
    PlannerSetup s = default_setup();
    s.batch = 64;
    s.context_tokens = 8192;
    s.kv = QStringLiteral("fp8");
    s.kernel = QStringLiteral("generic");
    s.profile = QStringLiteral("ideal");
    s.gpu_memory_utilization = 0.8;
    s.tensor_parallel = 2;
    s.goal = QStringLiteral("latency");
    const ModelConfig model = resolve_model("qwen3-8b", kSource / "models");
    const GpuProfile gpu = resolve_gpu("h100-sxm", kSource / "assets" / "gpus");
    const PlanRequest r = plan_request(s, model, gpu);
    BOOST_TEST(r.workload.batch == 64);
    BOOST_TEST(r.workload.context_tokens == 8192);
    BOOST_TEST(kv_format_name(r.workload.kv) == "fp8");
    BOOST_TEST((r.workload.kernel == KernelQuality::Generic));
    BOOST_TEST(r.efficiency.name == "ideal");
    BOOST_TEST(r.workload.engine.gpu_memory_utilization == 0.8);
    BOOST_TEST(r.workload.tensor_parallel == 2);
    BOOST_TEST((r.goal.goal == Goal::Latency));
    BOOST_TEST(r.schemes.size() == 6u);
    BOOST_TEST(r.crossover_max_batch == kMaxBatch);
    // Expert parallel: over the TP GPUs for an MoE model, ignored for a dense one; kept through JSON.
    s.expert_parallel = true;
    BOOST_TEST(plan_request(s, model, gpu).workload.expert_parallel == 1);
    const ModelConfig moe = resolve_model("qwen3-30b-a3b", kSource / "models");
    BOOST_TEST(plan_request(s, moe, gpu).workload.expert_parallel == 2);
    BOOST_TEST(setup_from_json(setup_to_json(s), default_setup(), QStringLiteral("t")).expert_parallel);
    // CUDA graphs off: the engine setup says so and each decode step pays the eager cost.
    const engine::EngineCatalog catalog = engine::load_engine_catalog(kSource / "assets" / "engines" / "profiles",
                                                                      kSource / "assets" / "engines" / "fit" / "engine-fit.json");
    PlannerSetup e = default_setup();
    e.profile = QStringLiteral("engine");
    e.schemes = {QStringLiteral("bf16")};
    const PlanRequest graphs = plan_request(e, model, gpu, nullptr, &catalog);
    e.enforce_eager = true;
    const PlanRequest eager = plan_request(e, model, gpu, nullptr, &catalog);
    BOOST_TEST_REQUIRE((graphs.engine && eager.engine));
    BOOST_TEST(graphs.engine->profile.defaults.cuda_graphs);
    BOOST_TEST(!eager.engine->profile.defaults.cuda_graphs);
    BOOST_TEST(plan(eager).schemes[0].decode.time_s > plan(graphs).schemes[0].decode.time_s);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(window_scenarios)

BOOST_AUTO_TEST_CASE(a_step_starts_from_the_previous_one) {
    const Scenario s = parse_scenario(R"({"name": "walk", "steps": [
        {"title": "one", "batch": 1, "context": 128, "note": "first"},
        {"title": "two", "batch": 1024, "panel": "memory"},
        {"title": "three", "kv": "fp8", "context": 4096}]})",
                                      QStringLiteral("walk.json"));
    BOOST_REQUIRE(s.steps.size() == 3u);
    BOOST_TEST(s.name.toStdString() == "walk");
    BOOST_TEST(s.steps[0].setup.context_tokens == 128);
    BOOST_TEST(s.steps[0].note.toStdString() == "first");
    BOOST_TEST(s.steps[1].setup.batch == 1024);
    BOOST_TEST(s.steps[1].setup.context_tokens == 128);
    BOOST_TEST(s.steps[1].panel.toStdString() == "memory");
    BOOST_TEST(s.steps[2].setup.batch == 1024);
    BOOST_TEST(s.steps[2].setup.kv.toStdString() == "fp8");
    BOOST_TEST(s.steps[2].setup.context_tokens == 4096);
    // Untouched keys keep the default setup's values.
    BOOST_TEST((s.steps[2].setup.schemes == default_setup().schemes));
}

BOOST_AUTO_TEST_CASE(malformed_scenarios_name_the_step_and_key) {
    const std::pair<const char*, const char*> cases[] = {
        {"not json", "x.json"},
        {R"([1])", "x.json"},
        {R"({"steps": [{"title": "a"}]})", "x.json: name"},
        {R"({"name": "n", "steps": []})", "x.json: steps"},
        {R"({"name": "n", "steps": [{"batch": 2}]})", "x.json: steps[0]: title"},
        {R"({"name": "n", "steps": [{"title": "a"}, {"title": "b", "kv": "int3"}]})", "x.json: steps[1]: kv"},
        {R"({"name": "n", "steps": [{"title": "a", "panel": "roofline"}]})", "x.json: steps[0]: panel"},
        {R"({"name": "n", "extra": 1, "steps": [{"title": "a"}]})", "x.json: extra"},
    };
    for (const auto& [text, field] : cases) {
        try {
            (void)parse_scenario(QByteArray(text), QStringLiteral("x.json"));
            BOOST_ERROR("accepted " << text);
        } catch (const Error& e) {
            BOOST_TEST(e.field() == field, "for " << text << ": field '" << e.field() << "', " << e.what());
        }
    }
}

BOOST_AUTO_TEST_CASE(every_bundled_scenario_parses_and_every_step_plans) {
    const QDir dir(QString::fromStdString((kSource / "assets" / "scenarios").string()));
    const QStringList files = dir.entryList({QStringLiteral("*.json")}, QDir::Files);
    BOOST_TEST(files.size() >= 3);
    for (const QString& f : files) {
        BOOST_TEST_CONTEXT("scenario " << f.toStdString()) {
            const Scenario s = load_scenario(dir.filePath(f));
            BOOST_TEST(s.steps.size() >= 2u);
            for (const ScenarioStep& step : s.steps) {
                BOOST_TEST_CONTEXT("step " << step.title.toStdString()) {
                    BOOST_TEST(!step.note.isEmpty());
                    BOOST_CHECK_NO_THROW((void)plan_of(step.setup));
                }
            }
        }
    }
}

BOOST_AUTO_TEST_CASE(the_seed_walk_reaches_batch_1024_at_128_then_fp8_kv_at_4096) {
    const Scenario s = load_scenario(QString::fromStdString((kSource / "assets" / "scenarios" / "seed-003-batch-walk.json").string()));
    BOOST_TEST(s.steps.front().setup.batch == 1);
    bool saw_1024_at_128 = false, saw_generic = false, saw_fp8_at_4096 = false;
    for (const ScenarioStep& step : s.steps) {
        saw_1024_at_128 = saw_1024_at_128 || (step.setup.batch == 1024 && step.setup.context_tokens == 128);
        saw_generic = saw_generic || step.setup.kernel == QLatin1String("generic");
        saw_fp8_at_4096 = saw_fp8_at_4096 || (step.setup.kv == QLatin1String("fp8") && step.setup.context_tokens == 4096 && step.setup.batch == 1024);
    }
    BOOST_TEST(saw_1024_at_128);
    BOOST_TEST(saw_generic);
    BOOST_TEST(saw_fp8_at_4096);
}

BOOST_AUTO_TEST_CASE(a_saved_setup_reads_back_equal) {
    QTemporaryDir dir;
    PlannerSetup s = default_setup();
    s.batch = 256;
    s.schemes = {QStringLiteral("bf16"), QStringLiteral("w4a16-g64")};
    s.error_lab.weight_formats = {QStringLiteral("int3")};
    const QString path = dir.filePath(QStringLiteral("mine.json"));
    save_scenario(path, setup_scenario(s, QStringLiteral("mine")));
    const Scenario back = load_scenario(path);
    BOOST_REQUIRE(back.steps.size() == 1u);
    BOOST_TEST((back.steps.front().setup == s));
    // A file over the size limit is refused before it is read.
    QFile big(dir.filePath(QStringLiteral("big.json")));
    BOOST_REQUIRE(big.open(QIODevice::WriteOnly));
    big.write(QByteArray(kMaxScenarioFileBytes + 1, ' '));
    big.close();
    BOOST_CHECK_THROW((void)load_scenario(big.fileName()), Error);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(window_controls)

BOOST_AUTO_TEST_CASE(log_slider_stops_cover_the_range_with_every_power_of_two) {
    for (const auto& [lo, hi] : {std::pair<std::int64_t, std::int64_t>{kMinBatch, kMaxBatch}, {kMinContextTokens, kMaxContextTokens}}) {
        const std::vector<std::int64_t> v = log_slider_values(lo, hi);
        BOOST_TEST(v.front() == lo);
        BOOST_TEST(v.back() == hi);
        BOOST_TEST(std::is_sorted(v.begin(), v.end()));
        BOOST_TEST((std::adjacent_find(v.begin(), v.end()) == v.end()));
        for (std::int64_t p = lo; p <= hi; p *= 2) BOOST_TEST((std::find(v.begin(), v.end(), p) != v.end()), "missing " << p);
    }
}

BOOST_AUTO_TEST_CASE(log_slider_takes_typed_values_exactly_and_clamps) {
    LogSlider s(kMinBatch, kMaxBatch);
    QSignalSpy spy(&s, &LogSlider::valueChanged);
    s.spinBox()->setValue(1000);  // typed entry: not a stop of the slider
    BOOST_TEST(s.value() == 1000);
    BOOST_TEST(spy.count() == 1);
    const std::vector<std::int64_t> stops = log_slider_values(kMinBatch, kMaxBatch);
    BOOST_TEST(stops[static_cast<std::size_t>(s.slider()->value())] == 1024);  // nearest stop
    s.slider()->setValue(0);
    BOOST_TEST(s.value() == 1);
    s.setValue(100000);
    BOOST_TEST(s.value() == kMaxBatch);
    s.setValueSilently(7);
    BOOST_TEST(spy.count() == 3);
    BOOST_TEST(s.value() == 7);
}

BOOST_AUTO_TEST_CASE(every_glossary_term_has_a_definition) {
    int count = 0;
    const char* const* keys = glossary_keys(&count);
    BOOST_TEST(count > 30);
    for (int i = 0; i < count; ++i) BOOST_TEST(glossary(keys[i]).size() > 20, keys[i]);
    BOOST_TEST(glossary("no such term").isEmpty());
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(window_models)

// Every model under QAbstractItemModelTester through two results (a reset between different
// row and column counts), every header with a tooltip, every cell equal to core's value.
BOOST_AUTO_TEST_CASE(result_models_pass_the_model_tester_and_show_core_values) {
    ModelWarnings warnings;
    PlannerSetup s = default_setup();
    const PlanResult a = plan_of(s);
    s.batch = 1024;
    s.context_tokens = 128;
    s.schemes = {QStringLiteral("bf16"), QStringLiteral("w4a16-g128")};
    const PlanResult b = plan_of(s);

    SchemeTableModel schemes;
    CheckpointTableModel checkpoint;
    MemoryTableModel memory;
    RankingModel ranking;
    std::vector<std::unique_ptr<QAbstractItemModelTester>> testers;
    for (QAbstractItemModel* m : std::initializer_list<QAbstractItemModel*>{&schemes, &checkpoint, &memory, &ranking})
        testers.push_back(std::make_unique<QAbstractItemModelTester>(m, QAbstractItemModelTester::FailureReportingMode::Warning));
    for (const PlanResult* p : {&a, &b, &a}) {
        schemes.setResult(*p);
        checkpoint.setResult(*p, std::uint64_t{6098581864});
        memory.setResult(*p);
        ranking.setResult(p->decision, p->request.goal.goal);
        BOOST_TEST(schemes.rowCount() == static_cast<int>(p->schemes.size()));
        BOOST_TEST(ranking.rowCount() == static_cast<int>(p->decision.ranking.size()));
    }
    BOOST_TEST(warnings.messages().isEmpty(), warnings.messages().join(QLatin1Char('\n')).toStdString());

    for (QAbstractItemModel* m : std::initializer_list<QAbstractItemModel*>{&schemes, &checkpoint, &memory, &ranking})
        for (int c = 0; c < m->columnCount(); ++c)
            BOOST_TEST(!m->headerData(c, Qt::Horizontal, Qt::ToolTipRole).toString().isEmpty(),
                       "column " << m->headerData(c, Qt::Horizontal).toString().toStdString() << " has no tooltip");

    // Values are core's, converted only for display.
    for (int r = 0; r < schemes.rowCount(); ++r) {
        const SchemeResult& res = a.schemes[static_cast<std::size_t>(r)];
        BOOST_TEST(schemes.index(r, 0).data(kExportRole).toString().toStdString() == scheme_name(res.costs.scheme));
        BOOST_TEST(schemes.index(r, 1).data(kExportRole).toLongLong() == res.decode.batch);
        BOOST_TEST(schemes.index(r, 2).data(kExportRole).toDouble() == res.decode.time_s * 1e3);
        BOOST_TEST(schemes.index(r, 4).data(kExportRole).toLongLong() == res.admission.max_sequences);
        BOOST_TEST(schemes.index(r, 5).data(kExportRole).toDouble() == res.throughput_tokens_per_s);
        BOOST_TEST(checkpoint.index(r, 4).data(kExportRole).toDouble() == static_cast<double>(res.costs.budget.checkpoint_bytes) / 1e9);
        BOOST_TEST(checkpoint.index(r, 6).data(kExportRole).toDouble() == res.costs.budget.effective_bits);
        BOOST_TEST(memory.index(r, 13).data(kExportRole).toLongLong() == res.admission.max_sequences);
        BOOST_TEST(memory.index(r, 11).data(kExportRole).toLongLong() == static_cast<qlonglong>(res.admission.kv_bytes_per_token));
    }
}

BOOST_AUTO_TEST_CASE(kv_what_if_rows_are_core_plans_with_only_the_kv_format_changed) {
    ModelWarnings warnings;
    PlannerSetup s = default_setup();
    s.batch = 1024;
    const PlanResult p = plan_of(s);
    TestContext context;
    const KvWhatIf w = kv_what_if(p.request, context);
    BOOST_TEST(w.rows.size() == kv_format_names().size());
    BOOST_TEST(context.reports > 0);
    KvWhatIfModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Warning);
    model.setResult(w);
    BOOST_TEST(model.rowCount() == static_cast<int>(w.rows.size()));
    BOOST_TEST(model.columnCount() == 2 + 2 * static_cast<int>(p.schemes.size()));
    for (std::size_t i = 0; i < w.rows.size(); ++i) {
        PlannerSetup k = s;
        k.kv = QString::fromStdString(w.rows[i].kv);
        const PlanResult expected = plan_of(k);
        BOOST_TEST_CONTEXT("kv " << w.rows[i].kv) {
            BOOST_TEST(w.rows[i].error.empty());
            for (std::size_t j = 0; j < expected.schemes.size(); ++j) {
                BOOST_TEST(w.rows[i].max_sequences[j] == expected.schemes[j].admission.max_sequences);
                BOOST_TEST(w.rows[i].throughput_tokens_per_s[j] == expected.schemes[j].throughput_tokens_per_s);
                BOOST_TEST(model.index(static_cast<int>(i), 2 + 2 * static_cast<int>(j)).data(kExportRole).toLongLong() ==
                           expected.schemes[j].admission.max_sequences);
            }
        }
    }
    BOOST_TEST(warnings.messages().isEmpty(), warnings.messages().join(QLatin1Char('\n')).toStdString());
    // Cancelled before it starts: nothing is priced.
    TestContext stopped;
    stopped.stop = true;
    BOOST_CHECK_THROW((void)kv_what_if(p.request, stopped), JobCancelled);
}

BOOST_AUTO_TEST_CASE(error_ladder_model_lists_core_ladders) {
    ModelWarnings warnings;
    ErrorLabSetup lab;
    lab.weight_formats = {QStringLiteral("int4"), QStringLiteral("int8")};
    TestContext context;
    const ErrorLadders ladders = run_error_ladders(lab, {}, context);
    BOOST_REQUIRE(ladders.ladders.size() == 2u);
    errorsim::ErrorLabConfig base;
    base.weights = errorsim::parse_weight_formats("int4", "test").front();
    const std::vector<errorsim::LadderRow> expected = errorsim::granularity_ladder(base);
    BOOST_REQUIRE(ladders.ladders[0].size() == expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i) {
        BOOST_TEST(ladders.ladders[0][i].granularity == expected[i].granularity);
        BOOST_TEST(ladders.ladders[0][i].result.layer_error_calibration == expected[i].result.layer_error_calibration);
        BOOST_TEST(ladders.ladders[0][i].result.weight_error == expected[i].result.weight_error);
    }
    ErrorLadderModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Warning);
    model.setResult(ladders);
    BOOST_TEST(model.rowCount() == 2 * static_cast<int>(expected.size()));
    BOOST_TEST(model.index(2, 2).data(kExportRole).toDouble() == expected[2].result.layer_error_calibration * 100);
    model.setResult({});
    BOOST_TEST(model.rowCount() == 0);
    BOOST_TEST(warnings.messages().isEmpty(), warnings.messages().join(QLatin1Char('\n')).toStdString());
}

BOOST_AUTO_TEST_CASE(csv_quotes_what_needs_quoting_and_keeps_full_precision) {
    const PlanResult p = plan_of(default_setup());
    SchemeTableModel model;
    model.setResult(p);
    const QString csv = table_csv(model);
    const QStringList lines = csv.split(QStringLiteral("\r\n"), Qt::SkipEmptyParts);
    BOOST_TEST(lines.size() == 1 + static_cast<int>(p.schemes.size()));
    BOOST_TEST(lines.front().startsWith(QStringLiteral("scheme,batch run,step (ms)")));
    // The step time is written with 17 significant digits: it reads back as the same double.
    const QStringList first = lines.at(1).split(QLatin1Char(','));
    BOOST_TEST(first.at(2).toDouble() == p.schemes.front().decode.time_s * 1e3);
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("t.csv"));
    save_table_csv(model, path);
    QFile f(path);
    BOOST_REQUIRE(f.open(QIODevice::ReadOnly));
    BOOST_TEST(QString::fromUtf8(f.readAll()) == csv);
    // A field holding a comma or a quote is quoted, quotes doubled.
    RankingModel ranking;
    Decision d;
    RankedScheme ranked;
    ranked.scheme = "bf16";
    ranked.value = 100.0;
    ranked.reasons = {"one, \"two\""};
    d.ranking.push_back(ranked);
    ranking.setResult(d, Goal::Throughput);
    BOOST_TEST(table_csv(ranking).contains(QStringLiteral("\"one, \"\"two\"\"\"")));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(window_background)

BOOST_AUTO_TEST_CASE(a_job_delivers_its_value_on_the_gui_thread) {
    BackgroundJob job;
    QSignalSpy finished(&job, &BackgroundJob::finished);
    int delivered = 0;
    Qt::HANDLE thread = nullptr;
    job.start<int>(QStringLiteral("t"), [](JobContext& c) {
        c.report(50, QStringLiteral("half"));
        return 42;
    }, [&](int v) {
        delivered = v;
        thread = QThread::currentThreadId();
    });
    BOOST_TEST(job.isRunning());
    BOOST_REQUIRE(finished.wait(kJobTimeoutMs));
    BOOST_TEST(delivered == 42);
    BOOST_TEST(thread == QThread::currentThreadId());
    BOOST_TEST(!job.isRunning());
}

BOOST_AUTO_TEST_CASE(cancel_stops_a_job_and_drops_its_result) {
    BackgroundJob job;
    QSignalSpy cancelled(&job, &BackgroundJob::cancelled);
    QSignalSpy finished(&job, &BackgroundJob::finished);
    std::atomic<bool> running{false};
    bool delivered = false;
    job.start<int>(QStringLiteral("loop"), [&](JobContext& c) {
        running = true;
        for (;;) {
            c.check_cancelled();
            QThread::msleep(1);
        }
        return 0;
    }, [&](int) { delivered = true; });
    while (!running) QThread::msleep(1);
    job.cancel();
    BOOST_TEST(cancelled.count() == 1);
    job.waitForThreads();
    QCoreApplication::processEvents();
    BOOST_TEST(!delivered);
    BOOST_TEST(finished.count() == 0);
}

BOOST_AUTO_TEST_CASE(a_newer_job_supersedes_an_older_one_and_errors_arrive_as_messages) {
    BackgroundJob job;
    QSignalSpy finished(&job, &BackgroundJob::finished);
    QSignalSpy failed(&job, &BackgroundJob::failed);
    std::vector<int> delivered;
    job.start<int>(QStringLiteral("old"), [](JobContext& c) {
        for (int i = 0; i < 2000 && !c.cancelled(); ++i) QThread::msleep(1);
        return 1;
    }, [&](int v) { delivered.push_back(v); });
    job.start<int>(QStringLiteral("new"), [](JobContext&) { return 2; }, [&](int v) { delivered.push_back(v); });
    BOOST_REQUIRE(finished.wait(kJobTimeoutMs));
    job.waitForThreads();
    QCoreApplication::processEvents();
    BOOST_TEST(delivered == std::vector<int>{2});
    job.start<int>(QStringLiteral("bad"), [](JobContext&) -> int { throw Error("--model", "no such model"); }, [](int) {});
    BOOST_REQUIRE(failed.wait(kJobTimeoutMs));
    BOOST_TEST(failed.front().front().toString().toStdString() == "--model: no such model");
}

BOOST_AUTO_TEST_CASE(checkpoint_scan_summarises_the_inspector_report) {
    QTemporaryDir dir;
    // An AWQ config.json over qwen3-8b's architecture, and two shards holding two of its tensors.
    QFile source(QString::fromStdString((kSource / "models" / "qwen3-8b" / "config.json").string()));
    BOOST_REQUIRE(source.open(QIODevice::ReadOnly));
    QJsonObject config = QJsonDocument::fromJson(source.readAll()).object();
    config.insert(QStringLiteral("quantization_config"),
                  QJsonObject{{QStringLiteral("quant_method"), QStringLiteral("awq")}, {QStringLiteral("bits"), 4},
                              {QStringLiteral("group_size"), 128}, {QStringLiteral("zero_point"), true}, {QStringLiteral("version"), QStringLiteral("gemm")}});
    QFile out(dir.filePath(QStringLiteral("config.json")));
    BOOST_REQUIRE(out.open(QIODevice::WriteOnly));
    out.write(QJsonDocument(config).toJson());
    out.close();
    std::uint64_t file_bytes = 0;
    const auto write_shard = [&](const QString& name, const std::vector<SafetensorsEntry>& tensors) {
        const std::string bytes = encode_safetensors(tensors);
        QFile f(dir.filePath(name));
        BOOST_REQUIRE(f.open(QIODevice::WriteOnly));
        f.write(bytes.data(), static_cast<qint64>(bytes.size()));
        file_bytes += bytes.size();
    };
    write_shard(QStringLiteral("model-00001-of-00002.safetensors"), {{"model.norm.weight", SafetensorsDtype::F16, {4096}, {}}});
    write_shard(QStringLiteral("model-00002-of-00002.safetensors"), {{"model.layers.0.input_layernorm.weight", SafetensorsDtype::F16, {4096}, {}}});
    TestContext context;
    const CheckpointScan scan = scan_checkpoint(dir.path(), context);
    BOOST_REQUIRE(scan.config.has_value());
    BOOST_TEST(scan.config->hidden_size == 4096);
    BOOST_TEST(scan.declared_method.toStdString() == "awq");
    BOOST_TEST(scan.declared_scheme.toStdString() == "w4a16-g128");
    BOOST_TEST(scan.safetensors_files == 2);
    BOOST_TEST(scan.compared);
    BOOST_TEST(scan.tensor_bytes() == 2u * 4096u * 2u);
    BOOST_TEST(scan.file_bytes == file_bytes);
    BOOST_TEST(scan.header_bytes == file_bytes - scan.tensor_bytes());
    BOOST_TEST(scan.predicted_tensor_bytes > 6'000'000'000u);  // the whole AWQ checkpoint, predicted
    BOOST_TEST(scan.mismatch_count > 0);                        // most tensors are missing
    BOOST_TEST(!scan.findings.isEmpty());
    BOOST_TEST(scan.findings.size() <= kMaxListedFindings);
    BOOST_TEST(context.reports >= 2);

    // A shard that is not a safetensors file is a finding, not an exception.
    QFile broken(dir.filePath(QStringLiteral("broken.safetensors")));
    BOOST_REQUIRE(broken.open(QIODevice::WriteOnly));
    broken.write(QByteArray("\xff\xff\x00\x00\x00\x00\x00\x00", 8));
    broken.close();
    const CheckpointScan with_broken = scan_checkpoint(dir.path(), context);
    BOOST_TEST(with_broken.findings.join(QLatin1Char('\n')).contains(QStringLiteral("broken.safetensors")),
               with_broken.findings.join(QLatin1Char('\n')).toStdString());
    // A path that does not exist is refused; a cancelled job stops.
    BOOST_CHECK_THROW((void)scan_checkpoint(dir.filePath(QStringLiteral("nothing-here")), context), Error);
    TestContext stopped;
    stopped.stop = true;
    BOOST_CHECK_THROW((void)scan_checkpoint(dir.path(), stopped), JobCancelled);
}

BOOST_AUTO_TEST_SUITE_END()
