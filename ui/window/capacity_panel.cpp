#include "ui/window/capacity_panel.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <future>
#include <thread>
#include <vector>

#include <QtCore/QLocale>
#include <QtCore/QSignalBlocker>
#include <QtCore/QTimer>
#include <QtWidgets/QComboBox>
#include <QtWidgets/QDoubleSpinBox>
#include <QtWidgets/QFormLayout>
#include <QtWidgets/QGridLayout>
#include <QtWidgets/QGroupBox>
#include <QtWidgets/QHBoxLayout>
#include <QtWidgets/QLabel>
#include <QtWidgets/QLineEdit>
#include <QtWidgets/QProgressBar>
#include <QtWidgets/QPushButton>
#include <QtWidgets/QSpinBox>
#include <QtWidgets/QSplitter>
#include <QtWidgets/QTabWidget>
#include <QtWidgets/QVBoxLayout>

#include "core/base/error.h"
#include "ui/charts/charts.h"
#include "ui/window/background_job.h"
#include "ui/window/chart_view.h"
#include "ui/window/launch_bar.h"

namespace quantplan::ui {
namespace {

constexpr double kMsPerS = 1e3;
constexpr double kPercent = 100.0;
// How long the controls must rest before a changed input reruns (typing a number, a spin box held).
constexpr int kDebounceMs = 400;


}  // namespace

serve::CapacityRequest capacity_request(const CapacityInputs& in, const std::map<std::string, double>& prices) {
    serve::CapacityRequest ask;
    serve::Traffic& t = ask.traffic;
    if (in.mode == CapacityInputs::Mode::Rate) t.rate_per_s = in.rate_per_s;
    if (in.mode == CapacityInputs::Mode::Users) t.concurrency = in.users;
    t.requests = in.requests;
    t.input = serve::parse_length_spec(in.input, "prompt lengths");
    t.output = serve::parse_length_spec(in.output, "output lengths");
    if (!(in.arrival_cv > 0) || in.arrival_cv > 100) throw Error("burstiness", "the coefficient of variation must be above 0 (1 is Poisson)");
    if (in.arrival_cv != 1.0) t.arrival = serve::parse_arrival("gamma:" + std::to_string(in.arrival_cv), "burstiness");
    if (in.prefix_tokens < 0) throw Error("shared prefix", "must be 0 or more tokens");
    t.prefix_tokens = in.prefix_tokens;
    t.seed = in.seed;
    if (in.slo_ttft_s > 0) ask.slo.ttft = serve::SloTarget{in.slo_ttft_s, 0.99};
    if (in.slo_tpot_s > 0) ask.slo.tpot = serve::SloTarget{in.slo_tpot_s, 0.99};
    if (in.target_rate_per_s > 0) ask.target_rate = in.target_rate_per_s;
    ask.prices = prices;
    return ask;
}

serve::CapacityPlan run_capacity(PlanRequest request, const CapacityInputs& inputs, const std::map<std::string, double>& prices, bool search,
                                 JobContext& context) {
    serve::CapacityRequest ask = capacity_request(inputs, prices);
    ask.search = search;
    ask.progress = [&context](double done, const std::string& what) {
        context.check_cancelled();
        context.report(static_cast<int>(std::lround(done * 100)), QString::fromStdString(what));
    };
    if (!request.engine) throw Error("engine", "capacity planning prices steps with an engine profile, and none is loaded");
    if (search || request.schemes.size() < 2) return serve::capacity_plan(request, {request}, ask);
    // The traffic as asked: each scheme's run is independent, so they run side by side (core starts
    // no threads; the panel may), at most one per core, and are put back in the request's order.
    const std::size_t workers = std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, request.schemes.size());
    std::vector<serve::SchemeCapacity> rows(request.schemes.size());
    std::atomic<std::size_t> next{0};
    const auto work = [&] {
        for (std::size_t i = next++; i < request.schemes.size(); i = next++) {
            PlanRequest one = request;
            one.schemes = {request.schemes[i]};
            serve::CapacityRequest one_ask = ask;
            one_ask.progress = [&context](double, const std::string& what) {
                context.check_cancelled();
                context.report(0, QString::fromStdString(what));
            };
            rows[i] = serve::capacity_plan(one, {}, one_ask).schemes.front();
        }
    };
    std::vector<std::future<void>> running;
    for (std::size_t k = 1; k < workers; ++k) running.push_back(std::async(std::launch::async, work));
    std::exception_ptr failure;
    try {
        work();
    } catch (...) {
        failure = std::current_exception();
        next = request.schemes.size();  // the others stop after their current scheme
    }
    for (std::future<void>& f : running) {
        try {
            f.get();
        } catch (...) {
            if (!failure) failure = std::current_exception();
        }
    }
    if (failure) std::rethrow_exception(failure);
    serve::CapacityPlan plan;
    plan.schemes = std::move(rows);
    return plan;
}

DisaggOutcome run_disagg(PlanRequest request, const CapacityInputs& inputs, const DisaggInputs& d, const std::vector<serve::Interconnect>& links,
                         const std::map<std::string, double>& prices, const std::map<std::string, serve::TransferTerms>& transfer_fit, JobContext& context) {
    if (!request.engine) throw Error("engine", "disaggregated serving prices steps with an engine profile, and none is loaded");
    if (request.schemes.empty()) throw Error("schemes", "no scheme to serve");
    if (inputs.mode == CapacityInputs::Mode::HighestRate)
        throw Error("arrivals", "disaggregation compares layouts at a rate or a number of users, not at each scheme's highest rate");
    if (d.search && inputs.mode != CapacityInputs::Mode::Rate) throw Error("arrivals", "finding the cheapest layout sizes pools for a rate: choose Poisson arrivals");
    const serve::CapacityRequest ask = capacity_request(inputs, prices);
    const auto link = std::find_if(links.begin(), links.end(), [&](const serve::Interconnect& l) { return l.id == d.link; });
    if (link == links.end()) throw Error("link", "'" + d.link + "' is not a bundled interconnect");
    DisaggOutcome out;
    serve::DisaggAsk a;
    // A pool's scheme: the one Find cheapest chose while it is still among the plan's, else the first.
    const auto scheme_of = [&](const std::string& name) {
        for (const Scheme& sc : request.schemes)
            if (scheme_name(sc) == name) return sc;
        return request.schemes.front();
    };
    a.prefill = {request, scheme_of(d.prefill_scheme), d.prefill_tp};
    a.decode = {request, scheme_of(d.decode_scheme), d.decode_tp};
    a.aggregated = {request, request.schemes.front(), request.workload.tensor_parallel};
    a.prefill_instances = d.prefill_instances;
    a.decode_instances = d.decode_instances;
    a.link = *link;
    if (d.links < 0 || d.links > 64) throw Error("links", "must be 0 (a link per GPU pair) to 64");
    a.links = d.links;
    a.connector = serve::resolve_connector(d.connector, request.engine->profile.engine);
    serve::apply_transfer_fit(a.connector, transfer_fit);
    a.traffic = ask.traffic;
    a.slo = ask.slo;
    a.poll = [&context] { context.check_cancelled(); };
    if (d.search) {
        serve::DisaggSearchAsk sa;
        for (const Scheme& sc : request.schemes)
            for (const std::int64_t tp : {1, 2, 4, 8}) {
                sa.prefill.push_back({request, sc, tp});
                sa.decode.push_back({request, sc, tp});
                sa.aggregated.push_back({request, sc, tp});
            }
        sa.link = a.link;
        sa.links = a.links;
        sa.connector = a.connector;
        sa.traffic = a.traffic;
        sa.slo = a.slo;
        sa.prices = prices;
        sa.progress = [&context](double done, const std::string& what) {
            context.check_cancelled();
            context.report(static_cast<int>(std::lround(done * 90)), QString::fromStdString(what));
        };
        out.search = serve::search_disagg(sa);
        if (!out.search->prefill) throw Error("disaggregation", "no layout of TP 1-8 and the plan's schemes holds the rate within the SLOs on 64 GPUs");
        a.prefill = *out.search->prefill;
        a.decode = *out.search->decode;
        a.prefill_instances = out.search->prefill_instances;
        a.decode_instances = out.search->decode_instances;
        if (out.search->aggregated) a.aggregated = *out.search->aggregated;
    }
    context.check_cancelled();
    context.report(95, QStringLiteral("running both layouts"));
    out.comparison = serve::compare_disagg(a);
    return out;
}

// --- Tables -----------------------------------------------------------------------------------

CapacityTableModel::CapacityTableModel(QObject* parent) : ResultTableModel(parent) { setResult({}, false); }

void CapacityTableModel::setResult(const serve::CapacityPlan& plan, bool searched) {
    std::vector<Column> columns = {
        {QStringLiteral("scheme"), QStringLiteral("The quantization scheme.")},
        {QStringLiteral("TTFT p50 (ms)"), QStringLiteral("Time to first token, median over the run's requests (queueing included).")},
        {QStringLiteral("TTFT p99 (ms)"), QStringLiteral("Time to first token, 99th percentile.")},
        {QStringLiteral("TPOT p50 (ms)"), QStringLiteral("Time per output token after the first, median.")},
        {QStringLiteral("TPOT p99 (ms)"), QStringLiteral("Time per output token, 99th percentile.")},
        {QStringLiteral("E2E p99 (s)"), QStringLiteral("End-to-end latency, 99th percentile.")},
        {QStringLiteral("output tok/s"), QStringLiteral("Output tokens per second over the run.")},
        {QStringLiteral("SLO met (%)"), QStringLiteral("Share of requests meeting every SLO (goodput / throughput).")},
        {QStringLiteral("preemptions"), QStringLiteral("Sequences preempted by recompute when the KV cache ran out.")},
        {QStringLiteral("KV use (%)"), QStringLiteral("Time-weighted share of KV-cache blocks in use.")},
        {QStringLiteral("highest req/s"), QStringLiteral("The highest Poisson rate one replica sustains within the SLOs with a stable queue.")},
        {QStringLiteral("replicas"), QStringLiteral("Replicas for the target rate.")},
        {QStringLiteral("GPUs"), QStringLiteral("Replicas x TP.")},
        {QStringLiteral("headroom (%)"), QStringLiteral("Capacity of those replicas beyond the target: replicas x highest rate / target - 1.")},
        {QStringLiteral("USD/M out"), QStringLiteral("USD per million output tokens at the highest rate, from the GPU's price per hour.")},
        {QStringLiteral("USD/M in"), QStringLiteral("USD per million input tokens at the highest rate.")},
        {QStringLiteral("TTFT p50 p10-p90 (ms)"),
         QStringLiteral("Where the measured TTFT p50 is expected to lie: the serving fit's leave-one-source-out errors on published runs under load.")},
        {QStringLiteral("TPOT p50 p10-p90 (ms)"), QStringLiteral("Where the measured TPOT p50 is expected to lie (the serving fit's errors).")},
        {QStringLiteral("highest req/s p10-p90"), QStringLiteral("Where the measured highest rate is expected to lie (the serving fit's errors).")},
    };
    // A figure's serving-fit band as text ("-" without one: --serving-fit none).
    const auto band = [&](const char* figure, const std::optional<double>& predicted, double unit, int digits) {
        const std::optional<serve::FigureBand> b = predicted ? serve::figure_band(plan, figure, *predicted) : std::nullopt;
        return text_cell(b ? QStringLiteral("%1-%2").arg(b->low * unit, 0, 'f', digits).arg(b->high * unit, 0, 'f', digits) : QStringLiteral("-"));
    };
    const QString pending = searched ? QStringLiteral("-") : QStringLiteral("…");
    std::vector<std::vector<Cell>> rows;
    for (const serve::SchemeCapacity& r : plan.schemes) {
        std::vector<Cell> row = {text_cell(QString::fromStdString(r.name))};
        if (!r.fits) {
            row.push_back(text_cell(QString::fromStdString(r.reason)));
            while (row.size() < columns.size()) row.push_back(text_cell(QStringLiteral("-")));
            rows.push_back(std::move(row));
            continue;
        }
        const serve::ServeStats& s = r.stats;
        if (s.overloaded) {
            // A growing queue: its latencies are no figures (docs/capacity.md, "Overload and what binds").
            row.push_back(text_cell(tr("overloaded: completes %1 of %2 requests/s offered")
                                        .arg(s.completed_requests_per_s, 0, 'f', 2)
                                        .arg(s.offered_requests_per_s, 0, 'f', 2)));
            while (row.size() < columns.size()) row.push_back(text_cell(QStringLiteral("-")));
            rows.push_back(std::move(row));
            continue;
        }
        row.push_back(number_cell(s.ttft_s.p50 * kMsPerS, 1));
        row.push_back(number_cell(s.ttft_s.p99 * kMsPerS, 1));
        row.push_back(number_cell(s.tpot_s.p50 * kMsPerS, 2));
        row.push_back(number_cell(s.tpot_s.p99 * kMsPerS, 2));
        row.push_back(number_cell(s.e2e_s.p99, 2));
        row.push_back(number_cell(s.output_tokens_per_s, 0));
        row.push_back(number_cell(s.slo_attainment * kPercent, 1));
        row.push_back(integer_cell(s.preemptions));
        row.push_back(number_cell(s.kv_utilization_mean * kPercent, 1));
        row.push_back(r.max_rate ? number_cell(*r.max_rate, 2) : text_cell(pending));
        row.push_back(r.replicas ? integer_cell(*r.replicas) : text_cell(pending));
        row.push_back(r.gpus ? integer_cell(*r.gpus) : text_cell(pending));
        row.push_back(r.headroom ? number_cell(*r.headroom * kPercent, 0) : text_cell(pending));
        row.push_back(r.cost_output ? number_cell(*r.cost_output, 3) : text_cell(pending));
        row.push_back(r.cost_input ? number_cell(*r.cost_input, 3) : text_cell(pending));
        row.push_back(band("ttft_s", s.ttft_s.p50, kMsPerS, 1));
        row.push_back(band("tpot_s", s.tpot_s.p50, kMsPerS, 2));
        row.push_back(r.max_rate ? band("requests_per_s", r.max_rate, 1, 2) : text_cell(pending));
        rows.push_back(std::move(row));
    }
    setTable(std::move(columns), std::move(rows));
}

RecommendationTableModel::RecommendationTableModel(QObject* parent) : ResultTableModel(parent) { setResult({}); }

void RecommendationTableModel::setResult(const serve::CapacityPlan& plan) {
    std::vector<Column> columns = {
        {QStringLiteral("rank"), QStringLiteral("Cheapest first (USD per hour), then fewest GPUs.")},
        {QStringLiteral("GPU"), QStringLiteral("GPU profile id.")},
        {QStringLiteral("TP"), QStringLiteral("Tensor parallelism of one replica.")},
        {QStringLiteral("scheme"), QStringLiteral("Quantization scheme (the accuracy tolerance's vetoes left out).")},
        {QStringLiteral("replicas"), QStringLiteral("Replicas for the target rate.")},
        {QStringLiteral("GPUs"), QStringLiteral("Replicas x TP.")},
        {QStringLiteral("req/s each"), QStringLiteral("The highest rate one replica sustains within the SLOs.")},
        {QStringLiteral("headroom (%)"), QStringLiteral("Capacity beyond the target rate: replicas x rate each / target - 1.")},
        {QStringLiteral("USD/h"), QStringLiteral("All the GPUs' price per hour.")},
        {QStringLiteral("USD/M out"), QStringLiteral("USD per million output tokens at the target rate.")},
    };
    std::vector<std::vector<Cell>> rows;
    for (std::size_t i = 0; i < plan.ranked.size(); ++i) {
        const serve::Configuration& c = plan.ranked[i];
        rows.push_back({integer_cell(static_cast<std::int64_t>(i + 1)), text_cell(QString::fromStdString(c.gpu)), integer_cell(c.tp),
                        text_cell(QString::fromStdString(c.scheme)), integer_cell(c.replicas), integer_cell(c.gpus), number_cell(c.max_rate, 2),
                        number_cell(c.headroom * kPercent, 0),
                        c.usd_per_hour ? number_cell(*c.usd_per_hour, 2) : text_cell(QStringLiteral("-")),
                        c.cost_output ? number_cell(*c.cost_output, 3) : text_cell(QStringLiteral("-"))});
    }
    setTable(std::move(columns), std::move(rows));
}

// --- CapacityPanel ----------------------------------------------------------------------------

CapacityPanel::CapacityPanel(QWidget* parent) : Panel(parent) {
    job_ = new BackgroundJob(this);
    debounce_ = new QTimer(this);
    debounce_->setSingleShot(true);
    debounce_->setInterval(kDebounceMs);
    connect(debounce_, &QTimer::timeout, this, &CapacityPanel::rerun);

    mode_ = new QComboBox(this);
    mode_->addItem(tr("Poisson, at a rate"));
    mode_->addItem(tr("N users (closed loop)"));
    mode_->addItem(tr("Highest rate"));
    mode_->setToolTip(tr("Poisson arrivals at a rate; N users each sending the next request when the last answer ends; "
                         "or each scheme at the highest rate it sustains within the SLOs."));
    rate_ = new QDoubleSpinBox(this);
    rate_->setRange(0.01, 100000);
    rate_->setDecimals(2);
    rate_->setSuffix(tr(" req/s"));
    users_ = new QSpinBox(this);
    users_->setRange(1, 100000);
    users_->setSuffix(tr(" users"));
    requests_ = new QSpinBox(this);
    requests_->setRange(100, 20000);
    requests_->setSingleStep(500);
    requests_->setToolTip(tr("Requests simulated per run (the highest-rate search runs at least 1,000)."));
    const QString spec_help = tr("Tokens: N, uniform:A:B, normal:MEAN:SD, lognormal:MEDIAN:SIGMA or file:PATH (one length a line), "
                                 "as --isl and --osl take them.");
    input_ = new QLineEdit(this);
    input_->setToolTip(tr("Prompt lengths. ") + spec_help);
    output_ = new QLineEdit(this);
    output_->setToolTip(tr("Output lengths. ") + spec_help);
    cv_ = new QDoubleSpinBox(this);
    cv_->setRange(0.1, 10);
    cv_->setDecimals(2);
    cv_->setSingleStep(0.25);
    cv_->setToolTip(tr("Coefficient of variation of the gaps between arrivals: 1 is Poisson, above 1 burstier (gamma gaps)."));
    prefix_ = new QSpinBox(this);
    prefix_->setRange(0, 1 << 20);
    prefix_->setSuffix(tr(" tokens"));
    prefix_->setToolTip(tr("A prompt prefix every request shares (a system prompt): prefilled once, its blocks held once."));
    slo_ttft_ = new QDoubleSpinBox(this);
    slo_ttft_->setRange(0, 600000);
    slo_ttft_->setDecimals(0);
    slo_ttft_->setSuffix(tr(" ms"));
    slo_ttft_->setSpecialValueText(tr("none"));
    slo_ttft_->setToolTip(tr("Time-to-first-token target at p99 (0: none)."));
    slo_tpot_ = new QDoubleSpinBox(this);
    slo_tpot_->setRange(0, 60000);
    slo_tpot_->setDecimals(1);
    slo_tpot_->setSuffix(tr(" ms"));
    slo_tpot_->setSpecialValueText(tr("none"));
    slo_tpot_->setToolTip(tr("Time-per-output-token target at p99 (0: none)."));
    target_ = new QDoubleSpinBox(this);
    target_->setRange(0, 1e7);
    target_->setDecimals(1);
    target_->setSuffix(tr(" req/s"));
    target_->setSpecialValueText(tr("none"));
    target_->setToolTip(tr("The rate to size for: replicas, GPUs and the cheapest configurations."));
    for (QAbstractSpinBox* box : std::initializer_list<QAbstractSpinBox*>{rate_, users_, requests_, cv_, prefix_, slo_ttft_, slo_tpot_, target_})
        box->setKeyboardTracking(false);
    setInputs(CapacityInputs{});
    const auto changed = [this] {
        rate_->setEnabled(mode_->currentIndex() == 0);
        users_->setEnabled(mode_->currentIndex() == 1);
        debounce_->start();
    };
    connect(mode_, qOverload<int>(&QComboBox::currentIndexChanged), this, changed);
    for (QDoubleSpinBox* box : {rate_, slo_ttft_, slo_tpot_, target_}) connect(box, qOverload<double>(&QDoubleSpinBox::valueChanged), this, changed);
    for (QSpinBox* box : {users_, requests_, prefix_}) connect(box, qOverload<int>(&QSpinBox::valueChanged), this, changed);
    connect(cv_, qOverload<double>(&QDoubleSpinBox::valueChanged), this, changed);
    for (QLineEdit* edit : {input_, output_}) connect(edit, &QLineEdit::editingFinished, this, changed);

    run_ = new QPushButton(tr("&Run"), this);
    run_->setToolTip(tr("Simulate the traffic for every scheme now."));
    connect(run_, &QPushButton::clicked, this, &CapacityPanel::rerun);
    cancel_ = new QPushButton(tr("Cancel"), this);
    cancel_->setEnabled(false);
    connect(cancel_, &QPushButton::clicked, job_, &BackgroundJob::cancel);
    progress_ = new QProgressBar(this);
    progress_->setRange(0, 100);
    progress_->setValue(0);
    status_ = new QLabel(this);
    status_->setWordWrap(true);
    status_->setObjectName(QStringLiteral("capacityStatus"));

    auto* traffic = new QGroupBox(tr("Traffic and targets"), this);
    auto* form = new QFormLayout(traffic);
    form->addRow(tr("&Arrivals:"), mode_);
    form->addRow(tr("Ra&te:"), rate_);
    form->addRow(tr("&Users:"), users_);
    form->addRow(tr("&Prompt:"), input_);
    form->addRow(tr("&Output:"), output_);
    form->addRow(tr("&Burstiness:"), cv_);
    form->addRow(tr("S&hared prefix:"), prefix_);
    form->addRow(tr("Re&quests:"), requests_);
    form->addRow(tr("TTFT p99 ≤"), slo_ttft_);
    form->addRow(tr("TPOT p99 ≤"), slo_tpot_);
    form->addRow(tr("&Target rate:"), target_);
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(run_);
    buttons->addWidget(cancel_);
    form->addRow(buttons);
    form->addRow(progress_);
    form->addRow(status_);
    traffic->setMaximumWidth(320);

    chart_box_ = new QComboBox(this);
    chart_box_->addItem(tr("TTFT p99 against request rate"));
    chart_box_->addItem(tr("TPOT p99 against request rate"));
    chart_box_->addItem(tr("End-to-end p99 against request rate"));
    chart_box_->addItem(tr("Cost per million output tokens per configuration"));
    chart_box_->setCurrentIndex(1);
    connect(chart_box_, qOverload<int>(&QComboBox::currentIndexChanged), this, [this] { chartChanged(); });
    view_ = new ChartView(this);
    view_->setObjectName(QStringLiteral("capacityChart"));
    timeline_box_ = new QComboBox(this);
    timeline_box_->setToolTip(tr("The scheme whose run the timeline shows."));
    connect(timeline_box_, qOverload<int>(&QComboBox::currentIndexChanged), this, [this] { buildTimeline(); });
    timeline_view_ = new ChartView(this);
    timeline_view_->setObjectName(QStringLiteral("capacityTimeline"));

    auto* chart_bar = new QHBoxLayout;
    chart_bar->addWidget(new QLabel(tr("Chart:"), this));
    chart_bar->addWidget(chart_box_);
    chart_bar->addStretch(1);
    auto* chart_page = new QWidget(this);
    auto* chart_layout = new QVBoxLayout(chart_page);
    chart_layout->setContentsMargins(0, 0, 0, 0);
    chart_layout->addLayout(chart_bar);
    chart_layout->addWidget(view_, 1);
    auto* timeline_bar = new QHBoxLayout;
    timeline_bar->addWidget(new QLabel(tr("Run of:"), this));
    timeline_bar->addWidget(timeline_box_);
    timeline_bar->addStretch(1);
    auto* timeline_page = new QWidget(this);
    auto* timeline_layout = new QVBoxLayout(timeline_page);
    timeline_layout->setContentsMargins(0, 0, 0, 0);
    timeline_layout->addLayout(timeline_bar);
    timeline_layout->addWidget(timeline_view_, 1);
    // Disaggregation (docs/disaggregation.md): a P:D layout beside aggregated serving, or the
    // cheapest layout found, for the traffic and SLOs above.
    disagg_job_ = new BackgroundJob(this);
    prefill_count_ = new QSpinBox(this);
    decode_count_ = new QSpinBox(this);
    for (QSpinBox* box : {prefill_count_, decode_count_}) box->setRange(1, 64);
    prefill_count_->setToolTip(tr("Prefill instances (P)."));
    decode_count_->setToolTip(tr("Decode instances (D)."));
    prefill_tp_ = new QComboBox(this);
    decode_tp_ = new QComboBox(this);
    for (QComboBox* box : {prefill_tp_, decode_tp_})
        for (const int tp : {1, 2, 4, 8}) box->addItem(QStringLiteral("TP %1").arg(tp), tp);
    link_ = new QComboBox(this);
    link_->setToolTip(tr("The link the KV cache crosses (assets/interconnects/)."));
    links_count_ = new QSpinBox(this);
    links_count_->setRange(0, 64);
    links_count_->setSpecialValueText(tr("a link per GPU"));
    links_count_->setSuffix(tr(" links"));
    links_count_->setObjectName(QStringLiteral("disaggLinks"));
    links_count_->setToolTip(tr("The links (NICs) a prefill instance sends its KV over, each at the link's bandwidth: by default one per GPU pair, "
                                "min(prefill TP, decode TP); fewer where the GPUs share NICs (--interconnect-links)."));
    connector_ = new QComboBox(this);
    connector_->addItem(tr("engine's default"), QString());
    for (const char* id : {"nixl", "p2p-nccl", "dynamo", "mooncake", "sglang"}) connector_->addItem(QString::fromLatin1(id), QString::fromLatin1(id));
    connector_->setToolTip(tr("How the KV moves: nixl pulls it whole after the prefill and the request passes the decode server's frontend too; "
                              "p2p-nccl sends it layer by layer; mooncake (vLLM's MooncakeConnector) as nixl; dynamo and sglang send it whole after the prefill."));
    compare_ = new QPushButton(tr("&Compare"), this);
    compare_->setToolTip(tr("Run this layout beside aggregated serving on the same GPUs, for the traffic and SLOs on the left."));
    connect(compare_, &QPushButton::clicked, this, [this] { compareDisagg(false); });
    find_ = new QPushButton(tr("&Find cheapest"), this);
    find_->setToolTip(tr("Search P, D, TP and scheme per pool for the cheapest layout that holds the rate, beside the cheapest aggregated one."));
    connect(find_, &QPushButton::clicked, this, [this] { compareDisagg(true); });
    disagg_status_ = new QLabel(tr("Compare a disaggregated layout with aggregated serving on the same GPUs."), this);
    disagg_status_->setWordWrap(true);
    disagg_status_->setObjectName(QStringLiteral("disaggStatus"));
    disagg_status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    disagg_view_ = new ChartView(this);
    disagg_view_->setObjectName(QStringLiteral("disaggChart"));
    // Two short rows, so that the panel still fits a 1,280-pixel screen.
    auto* disagg_bar = new QGridLayout;
    disagg_bar->addWidget(new QLabel(tr("Prefill:"), this), 0, 0);
    disagg_bar->addWidget(prefill_count_, 0, 1);
    disagg_bar->addWidget(prefill_tp_, 0, 2);
    disagg_bar->addWidget(new QLabel(tr("Decode:"), this), 0, 3);
    disagg_bar->addWidget(decode_count_, 0, 4);
    disagg_bar->addWidget(decode_tp_, 0, 5);
    disagg_bar->addWidget(compare_, 0, 6);
    disagg_bar->addWidget(new QLabel(tr("Link:"), this), 1, 0);
    disagg_bar->addWidget(link_, 1, 1);
    disagg_bar->addWidget(links_count_, 1, 2);
    disagg_bar->addWidget(new QLabel(tr("Connector:"), this), 1, 3);
    disagg_bar->addWidget(connector_, 1, 4, 1, 2);
    disagg_bar->addWidget(find_, 1, 6);
    disagg_bar->setColumnStretch(7, 1);
    auto* disagg_page = new QWidget(this);
    auto* disagg_layout = new QVBoxLayout(disagg_page);
    disagg_layout->setContentsMargins(0, 0, 0, 0);
    disagg_layout->addLayout(disagg_bar);
    disagg_layout->addWidget(disagg_status_);
    disagg_layout->addWidget(disagg_view_, 1);
    connect(disagg_job_, &BackgroundJob::started, this, [this](const QString& label) { disagg_status_->setText(label + QStringLiteral("…")); });
    connect(disagg_job_, &BackgroundJob::progress, this, [this](int percent, const QString& text) {
        disagg_status_->setText(QStringLiteral("%1% %2").arg(percent).arg(text));
    });
    connect(disagg_job_, &BackgroundJob::cancelled, this, [this] { disagg_status_->setText(tr("Cancelled.")); });
    connect(disagg_job_, &BackgroundJob::failed, this, [this](const QString& message) {
        disagg_status_->setText(message);
        emit errorMessage(message);
    });

    auto* chart_tabs = new QTabWidget(this);
    chart_tabs->addTab(chart_page, tr("Latency and cost"));
    chart_tabs->addTab(timeline_page, tr("Timeline"));
    chart_tabs->addTab(disagg_page, tr("Disaggregation"));

    model_ = new CapacityTableModel(this);
    table_ = new ResultTableView(this);
    table_->setModel(model_);
    table_->setObjectName(QStringLiteral("capacityTable"));
    ranking_model_ = new RecommendationTableModel(this);
    ranking_table_ = new ResultTableView(this);
    ranking_table_->setModel(ranking_model_);
    ranking_table_->setObjectName(QStringLiteral("recommendationTable"));
    auto* table_tabs = new QTabWidget(this);
    table_tabs->addTab(table_, tr("Per scheme"));
    table_tabs->addTab(ranking_table_, tr("Cheapest configurations"));

    auto* top = new QWidget(this);
    auto* top_layout = new QHBoxLayout(top);
    top_layout->setContentsMargins(0, 0, 0, 0);
    top_layout->addWidget(traffic);
    top_layout->addWidget(chart_tabs, 1);
    auto* split = new QSplitter(Qt::Vertical, this);
    split->addWidget(top);
    split->addWidget(table_tabs);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    launch_bar_ = new LaunchBar(this);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(split);
    layout->addWidget(launch_bar_);

    connect(job_, &BackgroundJob::started, this, [this](const QString& label) {
        cancel_->setEnabled(true);
        progress_->setValue(0);
        status_->setText(label + QStringLiteral("…"));
    });
    connect(job_, &BackgroundJob::progress, this, [this](int percent, const QString& text) {
        progress_->setValue(percent);
        status_->setText(text);
    });
    connect(job_, &BackgroundJob::cancelled, this, [this] {
        cancel_->setEnabled(false);
        status_->setText(tr("Cancelled; press Run to simulate again."));
        shown_key_.clear();
    });
    connect(job_, &BackgroundJob::failed, this, [this](const QString& message) {
        cancel_->setEnabled(false);
        progress_->setValue(0);
        status_->setText(message);
        emit errorMessage(message);
    });
}

CapacityPanel::~CapacityPanel() {
    job_->cancel();
    disagg_job_->cancel();
}

void CapacityPanel::setInterconnects(const std::vector<serve::Interconnect>& links) {
    links_ = links;
    const QString keep = link_->currentData().toString();
    const QSignalBlocker block(link_);
    link_->clear();
    for (const serve::Interconnect& l : links_) {
        link_->addItem(QString::fromStdString(l.id), QString::fromStdString(l.id));
        link_->setItemData(link_->count() - 1, QString::fromStdString(l.name), Qt::ToolTipRole);
    }
    const int again = link_->findData(keep.isEmpty() ? QStringLiteral("infiniband-ndr") : keep);
    link_->setCurrentIndex(again >= 0 ? again : 0);
    compare_->setEnabled(!links_.empty());
    find_->setEnabled(!links_.empty());
    if (links_.empty()) disagg_status_->setText(tr("No interconnect profiles were found (assets/interconnects/)."));
}

DisaggInputs CapacityPanel::disaggInputs() const {
    DisaggInputs d;
    d.prefill_instances = prefill_count_->value();
    d.decode_instances = decode_count_->value();
    d.prefill_tp = prefill_tp_->currentData().toInt();
    d.decode_tp = decode_tp_->currentData().toInt();
    d.link = link_->currentData().toString().toStdString();
    d.connector = connector_->currentData().toString().toStdString();
    d.links = links_count_->value();
    d.prefill_scheme = found_prefill_scheme_;
    d.decode_scheme = found_decode_scheme_;
    return d;
}

void CapacityPanel::setDisaggInputs(const DisaggInputs& d) {
    prefill_count_->setValue(static_cast<int>(d.prefill_instances));
    decode_count_->setValue(static_cast<int>(d.decode_instances));
    prefill_tp_->setCurrentIndex(std::max(0, prefill_tp_->findData(static_cast<int>(d.prefill_tp))));
    decode_tp_->setCurrentIndex(std::max(0, decode_tp_->findData(static_cast<int>(d.decode_tp))));
    const int link = link_->findData(QString::fromStdString(d.link));
    if (link >= 0) link_->setCurrentIndex(link);
    connector_->setCurrentIndex(std::max(0, connector_->findData(QString::fromStdString(d.connector))));
    links_count_->setValue(static_cast<int>(std::clamp<std::int64_t>(d.links, 0, 64)));
    found_prefill_scheme_ = d.prefill_scheme;
    found_decode_scheme_ = d.decode_scheme;
}

void CapacityPanel::compareDisagg(bool search) {
    if (!request_) {
        disagg_status_->setText(tr("No plan yet."));
        return;
    }
    const PlanRequest request = *request_;
    const CapacityInputs in = inputs();
    DisaggInputs d = disaggInputs();
    d.search = search;
    const std::vector<serve::Interconnect> links = links_;
    const std::map<std::string, double> prices = prices_;
    const std::map<std::string, serve::TransferTerms> transfer_fit = transfer_fit_;
    disagg_job_->start<DisaggOutcome>(
        search ? tr("Finding the cheapest layout") : tr("Running both layouts"),
        [request, in, d, links, prices, transfer_fit](JobContext& context) { return run_disagg(request, in, d, links, prices, transfer_fit, context); },
        [this](DisaggOutcome outcome) { setDisaggResult(outcome); });
}

void CapacityPanel::setDisaggResult(const DisaggOutcome& outcome) {
    disagg_result_ = outcome;
    const serve::DisaggComparison& c = outcome.comparison;
    const serve::DisaggSpec& sp = c.spec;
    if (outcome.search) {
        // The found layout goes into the controls (its schemes kept with them), so Compare reruns it.
        DisaggInputs d = disaggInputs();
        d.prefill_instances = sp.prefill.instances;
        d.decode_instances = sp.decode.instances;
        d.prefill_tp = sp.prefill.tp;
        d.decode_tp = sp.decode.tp;
        d.prefill_scheme = sp.prefill.scheme;
        d.decode_scheme = sp.decode.scheme;
        setDisaggInputs(d);
    }
    const serve::ServeStats& s = c.stats.end_to_end;
    QString text = tr("%1P:%2D (%3 and %4, %5 GPUs): TTFT p99 %6 ms, TPOT p99 %7 ms, KV transfer p99 %8 ms. ")
                       .arg(sp.prefill.instances)
                       .arg(sp.decode.instances)
                       .arg(QString::fromStdString(sp.prefill.scheme + " TP " + std::to_string(sp.prefill.tp)),
                            QString::fromStdString(sp.decode.scheme + " TP " + std::to_string(sp.decode.tp)))
                       .arg(c.gpus)
                       .arg(s.ttft_s.p99 * kMsPerS, 0, 'f', 1)
                       .arg(s.tpot_s.p99 * kMsPerS, 0, 'f', 2)
                       .arg(c.stats.transfer_s.p99 * kMsPerS, 0, 'f', 1);
    if (s.overloaded) text = tr("%1P:%2D is overloaded: completes %3 of %4 requests/s. ")
                                 .arg(sp.prefill.instances)
                                 .arg(sp.decode.instances)
                                 .arg(s.completed_requests_per_s, 0, 'f', 2)
                                 .arg(s.offered_requests_per_s, 0, 'f', 2);
    if (outcome.search && outcome.search->aggregated)
        text += tr("Cheapest aggregated: %1 x %2 (%3 GPUs). ")
                    .arg(outcome.search->aggregated_replicas)
                    .arg(QString::fromStdString(serve::pool_label(*outcome.search->aggregated)))
                    .arg(outcome.search->aggregated_cost.gpus);
    text += tr("Winner: %1. Bound: %2.").arg(QString::fromStdString(c.winner_detail), QString::fromStdString(c.bound_detail));
    const serve::TransferTerms& tt = c.connector.transfer;
    text += tt.points > 0 ? tr(" Transfer (%1): %2 ms a transfer, %3% of the line rate, fitted to %4 published times.")
                                .arg(QString::fromStdString(c.connector.id))
                                .arg(tt.per_transfer_s * kMsPerS, 0, 'f', 2)
                                .arg(tt.line_rate_fraction * 100, 0, 'f', 0)
                                .arg(tt.points)
                          : tr(" Transfer (%1): at the line rate (%2).").arg(QString::fromStdString(c.connector.id), QString::fromStdString(tt.basis));
    disagg_status_->setText(text);
    disagg_view_->replaceChart(make_disagg_comparison_chart(c));
    connect_bar_tooltips(disagg_view_);
}

CapacityInputs CapacityPanel::inputs() const {
    CapacityInputs in;
    in.mode = static_cast<CapacityInputs::Mode>(std::clamp(mode_->currentIndex(), 0, 2));
    in.rate_per_s = rate_->value();
    in.users = users_->value();
    in.requests = requests_->value();
    in.input = input_->text().trimmed().toStdString();
    in.output = output_->text().trimmed().toStdString();
    in.arrival_cv = cv_->value();
    in.prefix_tokens = prefix_->value();
    in.slo_ttft_s = slo_ttft_->value() / kMsPerS;
    in.slo_tpot_s = slo_tpot_->value() / kMsPerS;
    in.target_rate_per_s = target_->value();
    return in;
}

void CapacityPanel::setInputs(const CapacityInputs& in) {
    const QSignalBlocker b0(mode_), b1(rate_), b2(users_), b3(requests_), b4(input_), b5(output_), b6(slo_ttft_), b7(slo_tpot_), b8(target_),
        b9(cv_), b10(prefix_);
    mode_->setCurrentIndex(static_cast<int>(in.mode));
    rate_->setValue(in.rate_per_s);
    users_->setValue(static_cast<int>(in.users));
    requests_->setValue(static_cast<int>(in.requests));
    input_->setText(QString::fromStdString(in.input));
    output_->setText(QString::fromStdString(in.output));
    cv_->setValue(in.arrival_cv);
    prefix_->setValue(static_cast<int>(in.prefix_tokens));
    slo_ttft_->setValue(in.slo_ttft_s * kMsPerS);
    slo_tpot_->setValue(in.slo_tpot_s * kMsPerS);
    target_->setValue(in.target_rate_per_s);
    rate_->setEnabled(in.mode == CapacityInputs::Mode::Rate);
    users_->setEnabled(in.mode == CapacityInputs::Mode::Users);
    if (request_) debounce_->start();
}

QString CapacityPanel::requestKey() const {
    if (!request_) return {};
    const PlanRequest& r = *request_;
    QStringList parts = {QString::fromStdString(r.model.name), QString::fromStdString(r.gpu.id), QString::number(r.workload.tensor_parallel),
                         QString::fromStdString(kv_format_name(r.workload.kv)),
                         r.engine ? QString::fromStdString(r.engine->profile.id) : QString(),
                         QString::number(r.workload.engine.max_num_seqs), QString::number(r.workload.engine.max_num_batched_tokens),
                         QString::number(r.workload.engine.gpu_memory_utilization, 'g', 17)};
    for (const Scheme& s : r.schemes) parts << QString::fromStdString(scheme_name(s));
    const CapacityInputs in = inputs();
    parts << QString::number(static_cast<int>(in.mode)) << QString::number(in.rate_per_s, 'g', 17) << QString::number(in.users)
          << QString::number(in.requests) << QString::fromStdString(in.input) << QString::fromStdString(in.output)
          << QString::number(in.arrival_cv, 'g', 17) << QString::number(in.prefix_tokens)
          << QString::number(in.slo_ttft_s, 'g', 17) << QString::number(in.slo_tpot_s, 'g', 17) << QString::number(in.target_rate_per_s, 'g', 17);
    for (const auto& [gpu, usd_per_hour] : prices_) parts << QString::fromStdString(gpu) + QStringLiteral("=") + QString::number(usd_per_hour, 'g', 17);
    return parts.join(QLatin1Char('|'));
}

void CapacityPanel::setRequest(const PlanRequest& request, const std::map<std::string, double>& prices) {
    request_ = request;
    prices_ = prices;
    if (requestKey() == shown_key_) return;
    if (isVisible()) debounce_->start();
    else status_->setText(tr("Out of date: runs when this panel is shown."));
}

void CapacityPanel::showEvent(QShowEvent* event) {
    Panel::showEvent(event);
    if (request_ && requestKey() != shown_key_) debounce_->start();
}

void CapacityPanel::rerun() {
    debounce_->stop();
    if (!request_) return;
    shown_key_ = requestKey();
    running_inputs_ = inputs();
    if (running_inputs_.mode == CapacityInputs::Mode::HighestRate) {
        startSearch();
        return;
    }
    const PlanRequest request = *request_;
    const CapacityInputs in = running_inputs_;
    const std::map<std::string, double> prices = prices_;
    job_->start<serve::CapacityPlan>(
        tr("Simulating the traffic"), [request, in, prices](JobContext& context) { return run_capacity(request, in, prices, false, context); },
        [this](serve::CapacityPlan plan) {
            setResult(plan, false);
            startSearch();
        });
}

void CapacityPanel::startSearch() {
    const PlanRequest request = *request_;
    const CapacityInputs in = running_inputs_;
    const std::map<std::string, double> prices = prices_;
    job_->start<serve::CapacityPlan>(
        tr("Searching each scheme's highest rate"), [request, in, prices](JobContext& context) { return run_capacity(request, in, prices, true, context); },
        [this](serve::CapacityPlan plan) {
            setResult(plan, true);
            cancel_->setEnabled(false);
            progress_->setValue(100);
        });
}

void CapacityPanel::setResult(const serve::CapacityPlan& plan, bool searched) {
    plan_ = plan;
    searched_ = searched;
    model_->setResult(plan_, searched);
    ranking_model_->setResult(plan_);
    {
        const QString keep = timeline_box_->currentText();
        const QSignalBlocker block(timeline_box_);
        timeline_box_->clear();
        for (const serve::SchemeCapacity& s : plan_.schemes)
            if (s.fits) timeline_box_->addItem(QString::fromStdString(s.name));
        const int again = timeline_box_->findText(keep);
        timeline_box_->setCurrentIndex(again >= 0 ? again : 0);
    }
    buildTimeline();
    chartChanged();
    // The launches of the ranked configurations (those on the request's GPU: the window ranks no other).
    if (request_ && searched && !plan_.ranked.empty()) {
        const PlanRequest request = *request_;
        const CapacityInputs in = running_inputs_;
        const serve::CapacityPlan shown = plan_;
        const std::map<std::string, double> prices = prices_;
        const std::string engine = request.engine ? request.engine->choice.engine : std::string("vllm");
        const std::string version = request.engine ? request.engine->choice.version_asked : std::string();
        launch_bar_->setProvider(engine, [request, in, shown, prices, version](const launch::LaunchData& data) {
            const std::int64_t longest = serve::longest_request(capacity_request(in, prices).traffic);
            std::vector<launch::Launch> out;
            for (const serve::Configuration& c : shown.ranked) {
                if (c.gpu != request.gpu.id) continue;
                PlanRequest r = request;
                r.schemes = {parse_scheme(c.scheme)};
                r.workload.tensor_parallel = c.tp;
                r.workload.context_tokens = longest;
                r.workload.batch = 1;
                const PlanResult priced = quantplan::plan(r);
                out.push_back(launch::make_launch(launch::launch_request(priced.request, priced.schemes.front(), data, request.model.name, version,
                                                                         longest, c.replicas, in.prefix_tokens > 0),
                                                  data.args, data.deployment, data.published, data.gpus));
            }
            return out;
        });
    } else {
        launch_bar_->setProvider("", nullptr);
    }
    int fitting = 0;
    for (const serve::SchemeCapacity& s : plan_.schemes) fitting += s.fits ? 1 : 0;
    status_->setText(searched ? tr("%1 schemes simulated; highest rates searched%2.")
                                    .arg(fitting)
                                    .arg(plan_.ranked.empty() ? QString() : tr(", %1 configurations ranked").arg(plan_.ranked.size()))
                              : tr("%1 schemes simulated; searching the highest rates…").arg(fitting));
}

void CapacityPanel::buildChart() {
    const int which = chart_box_->currentIndex();
    if (which == 3) {
        view_->replaceChart(make_capacity_cost_chart(plan_));
        connect_bar_tooltips(view_);
        return;
    }
    LatencyRateChartOptions o;
    o.metric = which == 0 ? ServeLatency::Ttft : which == 1 ? ServeLatency::Tpot : ServeLatency::E2e;
    const CapacityInputs in = inputs();
    const double slo = which == 0 ? in.slo_ttft_s : which == 1 ? in.slo_tpot_s : 0.0;
    if (slo > 0) o.slo_s = slo;
    view_->replaceChart(make_latency_rate_chart(plan_, o));
}

void CapacityPanel::buildTimeline() {
    const QString name = timeline_box_->currentText();
    for (const serve::SchemeCapacity& s : plan_.schemes)
        if (s.fits && QString::fromStdString(s.name) == name) {
            timeline_view_->replaceChart(make_timeline_chart(s.stats.timeline, tr("%1: one run over time").arg(name)));
            return;
        }
    timeline_view_->replaceChart(make_timeline_chart({}, tr("One run over time")));
}

}  // namespace quantplan::ui
