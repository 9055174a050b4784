#pragma once
// Panel f: capacity. The traffic (Poisson rate, N users or each scheme's highest rate; prompt
// and output lengths; requests) and the SLOs as controls, core's capacity planning run off the
// GUI thread with progress and cancel, and its results: a table per scheme (TTFT, TPOT, tokens/s,
// SLO attainment, highest rate, replicas, cost), the ranked configurations, latency against
// request rate with the SLO and each scheme's highest rate, cost per configuration, and a timeline
// of one scheme's run (batch, queue, KV use). A run first shows the traffic as asked (a fraction
// of a second), then the highest-rate search and the ranking (seconds).
#include <map>
#include <optional>
#include <string>

#include "core/plan/plan.h"
#include "core/serve/capacity_plan.h"
#include "core/serve/disagg_plan.h"
#include "ui/window/panel.h"
#include "ui/window/table_models.h"

QT_BEGIN_NAMESPACE
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTimer;
QT_END_NAMESPACE

namespace quantplan::ui {

class BackgroundJob;
class JobContext;

// What the panel's controls ask.
struct CapacityInputs {
    enum class Mode { Rate, Users, HighestRate };
    Mode mode = Mode::Rate;
    double rate_per_s = 4;
    std::int64_t users = 32;
    std::int64_t requests = 2000;
    // Prompt and output lengths as --isl / --osl spell them: N, uniform:A:B, normal:MEAN:SD,
    // lognormal:MEDIAN:SIGMA or file:PATH.
    std::string input = "2000", output = "500";
    double arrival_cv = 1.0;            // Poisson at 1; gamma gaps with this coefficient of variation otherwise
    std::int64_t prefix_tokens = 0;     // a prompt prefix every request shares (prefix caching)
    double slo_ttft_s = 2.0;    // 0: none (p99)
    double slo_tpot_s = 0.05;   // 0: none (p99)
    double target_rate_per_s = 20;  // 0: none
    std::uint64_t seed = 1;
};

// The capacity request of `inputs`: traffic, SLOs at p99, target and `prices`. Throws Error naming
// the control for a malformed length spec or burstiness.
serve::CapacityRequest capacity_request(const CapacityInputs& inputs, const std::map<std::string, double>& prices);

// Runs core's capacity planning of `request` (a plan request priced by an engine profile) for
// `inputs` on the request's GPU (core sets the engine's max_model_len from the traffic).
// `search` false: only the traffic as asked, the schemes side by side. Polls `context` and
// reports progress between simulations. Throws Error for an SLO below the fastest step or a
// request longer than the model takes.
serve::CapacityPlan run_capacity(PlanRequest request, const CapacityInputs& inputs, const std::map<std::string, double>& prices, bool search,
                                 JobContext& context);

// What the panel's disaggregation section asks (docs/disaggregation.md).
struct DisaggInputs {
    std::int64_t prefill_instances = 1, decode_instances = 1;
    std::int64_t prefill_tp = 1, decode_tp = 1;
    std::string link = "infiniband-ndr";   // an interconnect id of the bundled profiles
    std::string connector;                 // "" : the engine's default
    std::int64_t links = 0;                // links a prefill instance sends over (0: one per GPU pair; --interconnect-links)
    // Each pool's scheme ("": the request's first); Find cheapest sets them to what it found.
    std::string prefill_scheme, decode_scheme;
    bool search = false;                   // find the cheapest layout (TP 1-8, the request's schemes) first
};

// What the section shows: the layout beside aggregated serving, and the search's answer.
struct DisaggOutcome {
    serve::DisaggComparison comparison;
    std::optional<serve::DisaggSearch> search;
};

// Runs core's disaggregated comparison (with `d.search`: core's search first) of `request`'s first
// scheme on its GPU for the traffic and SLOs of `inputs`; the aggregated side is the request's TP.
// Throws Error naming what is wrong: no engine profile, each scheme's highest rate asked (the
// layouts need a rate or users; the search needs a rate), an unknown link, a pool that does not fit.
// `transfer_fit`: the connectors' fitted transfer terms (serve::load_transfer_fit), as the command
// line applies them.
DisaggOutcome run_disagg(PlanRequest request, const CapacityInputs& inputs, const DisaggInputs& d, const std::vector<serve::Interconnect>& links,
                         const std::map<std::string, double>& prices, const std::map<std::string, serve::TransferTerms>& transfer_fit, JobContext& context);

// The per-scheme table: one row per scheme of a capacity plan.
class CapacityTableModel : public ResultTableModel {
    Q_OBJECT
public:
    explicit CapacityTableModel(QObject* parent = nullptr);
    // One row per scheme, in plan order; `searched` false leaves the search's columns empty.
    void setResult(const serve::CapacityPlan& plan, bool searched);
};

// The ranked configurations.
class RecommendationTableModel : public ResultTableModel {
    Q_OBJECT
public:
    explicit RecommendationTableModel(QObject* parent = nullptr);
    void setResult(const serve::CapacityPlan& plan);
};

// The capacity panel.
class CapacityPanel : public Panel {
    Q_OBJECT
public:
    explicit CapacityPanel(QWidget* parent = nullptr);
    ~CapacityPanel() override;

    // The plan request to size (schemes, GPU, TP, engine; priced by the engine profile) and the
    // GPU prices (USD per GPU-hour by GPU id). Reruns when they changed and the panel is shown;
    // when it is hidden, on showing.
    void setRequest(const PlanRequest& request, const std::map<std::string, double>& prices);
    // The inputs the controls show, and setting them (emitting nothing; reruns as setRequest does).
    CapacityInputs inputs() const;
    void setInputs(const CapacityInputs& inputs);

    // The plan shown now (empty before the first run) and whether its search has finished.
    const serve::CapacityPlan& result() const { return plan_; }
    bool searched() const { return searched_; }
    // Shows a capacity plan as a finished run would (the window's jobs, tests, the benchmark).
    void setResult(const serve::CapacityPlan& plan, bool searched);

    // The job computing the runs.
    BackgroundJob* job() const { return job_; }

    // Panel: the latency-against-rate (or cost) chart, the scheme table then the ranking.
    ChartView* chartView() const override { return view_; }
    QList<ResultTableView*> tables() const override { return {table_, ranking_table_}; }
    QString exportName() const override { return QStringLiteral("capacity"); }
    // The models and controls (tests).
    CapacityTableModel* model() const { return model_; }
    RecommendationTableModel* rankingModel() const { return ranking_model_; }
    ChartView* timelineView() const { return timeline_view_; }
    QComboBox* chartBox() const { return chart_box_; }
    QComboBox* timelineBox() const { return timeline_box_; }
    QComboBox* modeBox() const { return mode_; }
    QDoubleSpinBox* rateBox() const { return rate_; }
    QPushButton* runButton() const { return run_; }
    QPushButton* cancelButton() const { return cancel_; }
    QLabel* status() const { return status_; }
    // "Copy launch command" and "Save deployment…" for the ranked configurations.
    class LaunchBar* launchBar() const { return launch_bar_; }

    // The disaggregation section: the links it offers (the bundled interconnect profiles), its
    // inputs, its job and what it shows.
    void setInterconnects(const std::vector<serve::Interconnect>& links);
    // The connectors' fitted transfer terms (assets/engines/fit/kv-transfer-fit.json).
    void setTransferFit(const std::map<std::string, serve::TransferTerms>& fit) { transfer_fit_ = fit; }
    DisaggInputs disaggInputs() const;
    void setDisaggInputs(const DisaggInputs& inputs);
    BackgroundJob* disaggJob() const { return disagg_job_; }
    const std::optional<DisaggOutcome>& disaggResult() const { return disagg_result_; }
    void setDisaggResult(const DisaggOutcome& outcome);
    ChartView* disaggView() const { return disagg_view_; }
    QLabel* disaggStatus() const { return disagg_status_; }
    QPushButton* compareButton() const { return compare_; }
    QPushButton* findButton() const { return find_; }

public slots:
    // Runs the current request and inputs now (latest wins): the traffic as asked, then the search.
    void rerun();
    // Runs the disaggregation section's layout (or, `search`, finds the cheapest first).
    void compareDisagg(bool search = false);

signals:
    void errorMessage(const QString& message);

protected:
    void buildChart() override;
    void showEvent(QShowEvent* event) override;

private:
    void startSearch();
    void buildTimeline();
    QString requestKey() const;

    std::optional<PlanRequest> request_;
    std::map<std::string, double> prices_;
    QString shown_key_;                  // the request and inputs of the plan shown (or computing)
    serve::CapacityPlan plan_;
    bool searched_ = false;
    CapacityInputs running_inputs_;
    BackgroundJob* job_ = nullptr;
    QTimer* debounce_ = nullptr;
    QComboBox* mode_ = nullptr;
    QDoubleSpinBox* rate_ = nullptr;
    QSpinBox* users_ = nullptr;
    QSpinBox* requests_ = nullptr;
    QLineEdit* input_ = nullptr;
    QLineEdit* output_ = nullptr;
    QDoubleSpinBox* cv_ = nullptr;
    QSpinBox* prefix_ = nullptr;
    QDoubleSpinBox* slo_ttft_ = nullptr;
    QDoubleSpinBox* slo_tpot_ = nullptr;
    QDoubleSpinBox* target_ = nullptr;
    QPushButton* run_ = nullptr;
    QPushButton* cancel_ = nullptr;
    QProgressBar* progress_ = nullptr;
    QLabel* status_ = nullptr;
    QComboBox* chart_box_ = nullptr;
    QComboBox* timeline_box_ = nullptr;
    ChartView* view_ = nullptr;
    ChartView* timeline_view_ = nullptr;
    ResultTableView* table_ = nullptr;
    CapacityTableModel* model_ = nullptr;
    ResultTableView* ranking_table_ = nullptr;
    RecommendationTableModel* ranking_model_ = nullptr;
    class LaunchBar* launch_bar_ = nullptr;
    // The disaggregation section.
    std::vector<serve::Interconnect> links_;
    std::map<std::string, serve::TransferTerms> transfer_fit_;
    BackgroundJob* disagg_job_ = nullptr;
    std::optional<DisaggOutcome> disagg_result_;
    QSpinBox* prefill_count_ = nullptr;
    QSpinBox* decode_count_ = nullptr;
    QComboBox* prefill_tp_ = nullptr;
    QComboBox* decode_tp_ = nullptr;
    QComboBox* link_ = nullptr;
    QSpinBox* links_count_ = nullptr;
    QComboBox* connector_ = nullptr;
    QPushButton* compare_ = nullptr;
    QPushButton* find_ = nullptr;
    QLabel* disagg_status_ = nullptr;
    ChartView* disagg_view_ = nullptr;
    std::string found_prefill_scheme_, found_decode_scheme_;  // what Find cheapest chose ("": the first scheme)
};

}  // namespace quantplan::ui
