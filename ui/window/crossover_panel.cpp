#include "ui/window/crossover_panel.h"

#include <algorithm>
#include <cmath>

#include <QtCharts/QLegend>
#include <QtCore/QLocale>
#include <QtWidgets/QComboBox>
#include <QtWidgets/QHBoxLayout>
#include <QtWidgets/QLabel>
#include <QtWidgets/QSplitter>
#include <QtWidgets/QVBoxLayout>

#include "core/scheme/scheme.h"
#include "ui/charts/charts.h"
#include "ui/window/chart_view.h"
#include "ui/window/glossary.h"
#include "ui/window/planner_setup.h"
#include "ui/window/table_models.h"

namespace quantplan::ui {
namespace {

// Sweep density of the crossover chart: 8 points per octave keeps every kink of a max() curve
// within 9% of its batch while drawing ~100 points per scheme.
constexpr int kSweepStepsPerOctave = 8;

QString number(double v, int decimals) { return QLocale::c().toString(v, 'f', decimals); }

}  // namespace

std::vector<std::int64_t> crossover_sweep_batches(const PlanResult& plan) {
    std::vector<std::int64_t> b;
    const int steps = 12 * kSweepStepsPerOctave;  // log2(4096) octaves
    for (int i = 0; i <= steps; ++i)
        b.push_back(std::clamp<std::int64_t>(std::llround(std::exp2(static_cast<double>(i) / kSweepStepsPerOctave)), kMinBatch, kMaxBatch));
    const auto add = [&](std::int64_t v) {
        if (v >= kMinBatch && v <= kMaxBatch) b.push_back(v);
    };
    add(plan.request.workload.batch);
    for (const SchemeResult& s : plan.schemes) {
        add(s.admission.max_sequences);
        add(s.admission.max_sequences + 1);
    }
    for (const Crossover& c : plan.crossovers) {
        add(static_cast<std::int64_t>(std::floor(c.batch)));
        add(static_cast<std::int64_t>(std::ceil(c.batch)));
        add(static_cast<std::int64_t>(std::floor(c.batch)) - 1);
    }
    std::sort(b.begin(), b.end());
    b.erase(std::unique(b.begin(), b.end()), b.end());
    return b;
}

const SweepPoint* nearest_sweep_point(const std::vector<SweepPoint>& sweep, const std::string& scheme, double batch) {
    if (!(batch > 0)) return nullptr;
    const SweepPoint* best = nullptr;
    double best_distance = INFINITY;
    for (const SweepPoint& p : sweep) {
        if (p.scheme != scheme) continue;
        const double d = std::fabs(std::log2(static_cast<double>(p.batch)) - std::log2(batch));
        if (d < best_distance) {
            best_distance = d;
            best = &p;
        }
    }
    return best;
}

CrossoverPanel::CrossoverPanel(QWidget* parent) : Panel(parent) {
    view_ = new ChartView(this);
    view_->setObjectName(QStringLiteral("crossoverChart"));
    view_->setToolTip({});
    view_->setHoverText([this](const QPointF& value) { return readoutAt(value.x()); });
    metric_ = new QComboBox(this);
    metric_->addItem(tr("Step time (ms)"));
    metric_->addItem(tr("Tokens per second"));
    metric_->setToolTip(glossary("step_time") + QStringLiteral("\n") + glossary("tokens_per_s"));
    connect(metric_, qOverload<int>(&QComboBox::currentIndexChanged), this, [this] { chartChanged(); });
    markers_ = new QLabel(this);
    markers_->setWordWrap(true);
    markers_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    markers_->setToolTip(glossary("ridge") + QStringLiteral("\n") + glossary("crossover"));
    model_ = new SchemeTableModel(this);
    table_ = new ResultTableView(this);
    table_->setModel(model_);
    table_->setObjectName(QStringLiteral("schemeTable"));

    auto* bar = new QHBoxLayout;
    auto* metric_label = new QLabel(tr("&Y axis:"), this);
    metric_label->setBuddy(metric_);
    bar->addWidget(metric_label);
    bar->addWidget(metric_);
    bar->addStretch(1);
    auto* top = new QWidget(this);
    auto* top_layout = new QVBoxLayout(top);
    top_layout->setContentsMargins(0, 0, 0, 0);
    top_layout->addLayout(bar);
    top_layout->addWidget(view_, 1);
    top_layout->addWidget(markers_);
    auto* split = new QSplitter(Qt::Vertical, this);
    split->addWidget(top);
    split->addWidget(table_);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 1);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(split);
}

void CrossoverPanel::setMetricTokensPerS(bool tokens_per_s) { metric_->setCurrentIndex(tokens_per_s ? 1 : 0); }

void CrossoverPanel::setResult(const PlanResult& plan, const std::vector<SweepPoint>& sweep, const MeasuredOverlay* measured,
                               const QString& calibration_label) {
    plan_ = plan;
    sweep_ = sweep;
    measured_ = measured ? measured->points : std::vector<MeasuredStepPoint>{};
    model_->setResult(plan_);
    QStringList lines;
    QStringList ridges;
    for (const RidgeInfo& r : plan_.ridges) {
        if (std::isfinite(r.batch) && r.batch <= static_cast<double>(kMaxBatch))
            ridges << QStringLiteral("%1 at batch %2").arg(QString::fromStdString(r.scheme), number(r.batch, 1));
    }
    lines << tr("Ridge points (memory → compute): %1").arg(ridges.isEmpty() ? tr("none up to batch 4,096 at this context") : ridges.join(QStringLiteral("; ")));
    QStringList crossings;
    for (const Crossover& c : plan_.crossovers)
        crossings << tr("batch %1: %2 faster below, %3 above")
                         .arg(number(c.batch, 0), QString::fromStdString(c.faster_below), QString::fromStdString(c.faster_above));
    lines << tr("Crossovers: %1").arg(crossings.isEmpty() ? tr("none up to batch 4,096") : crossings.join(QStringLiteral("; ")));
    if (measured) {
        QString line = tr("Measured (triangles, %1): ").arg(calibration_label);
        if (measured->points.empty())
            line += tr("no points");
        else
            line += tr("%1 decode steps, predicted vs measured median |error| %2%")
                        .arg(measured->points.size())
                        .arg(number(100.0 * median_abs_relative_error(measured->points), 1));
        for (const std::string& n : measured->notes) line += QStringLiteral("; ") + QString::fromStdString(n);
        lines << line;
    }
    markers_->setText(lines.join(QStringLiteral("\n")));
    chartChanged();
}

void CrossoverPanel::buildChart() {
    CrossoverChartOptions options;
    options.metric = metric_->currentIndex() == 1 ? CrossoverMetric::TokensPerS : CrossoverMetric::StepTimeMs;
    options.measured = measured_;
    // In place when the series are the same ones (a batch or context change); a new chart otherwise.
    if (update_crossover_chart(view_->chart(), plan_, sweep_, options)) return;
    // The legend goes to the right: at the bottom, six schemes and three markers truncate.
    if (view_->showChart(make_crossover_chart(plan_, sweep_, options))) view_->chart()->legend()->setAlignment(Qt::AlignRight);
}

QString CrossoverPanel::readoutAt(double batch) const {
    if (plan_.schemes.empty() || !(batch > 0)) return {};
    QString html;
    std::int64_t shown_batch = 0;
    for (const SchemeResult& r : plan_.schemes) {
        const std::string name = scheme_name(r.costs.scheme);
        const SweepPoint* p = nearest_sweep_point(sweep_, name, batch);
        if (!p) continue;
        shown_batch = p->batch;
        html += QStringLiteral("<tr><td><b>%1</b></td><td align=right>%2 ms</td><td align=right>%3 tok/s</td><td>%4-bound</td><td>%5</td></tr>")
                    .arg(QString::fromStdString(name), number(p->time_s * 1e3, 3), number(p->throughput_tokens_per_s, 0),
                         QString::fromUtf8(bound_name(p->bound)),
                         p->admitted ? tr("admitted (max %1)").arg(p->max_sequences) : tr("<i>not admitted</i> (max %1)").arg(p->max_sequences));
    }
    for (const MeasuredStepPoint& m : measured_) {
        if (m.batch != shown_batch) continue;
        html += QStringLiteral("<tr><td><b>%1</b> measured</td><td align=right>%2 ms</td><td align=right>%3 tok/s</td><td>%4</td><td>error %5%</td></tr>")
                    .arg(QString::fromStdString(m.scheme), number(m.measured_step_s * 1e3, 3), number(static_cast<double>(m.batch) / m.measured_step_s, 0),
                         QString::fromStdString(m.kernel), number(100.0 * m.relative_error(), 1));
    }
    if (html.isEmpty()) return {};
    return tr("<p><b>batch %1</b>, context %2</p><table cellspacing=4>%3</table>")
        .arg(shown_batch)
        .arg(plan_.request.workload.context_tokens)
        .arg(html);
}

}  // namespace quantplan::ui
