// The memory and admission chart: per scheme, the bytes one decode step moves (DecodeStep) and
// how the GPU's memory is split by the engine (Admission), with the maximum sequences admitted.
#include <algorithm>
#include <array>

#include <QtCharts/QBarCategoryAxis>
#include <QtCharts/QBarSet>
#include <QtCharts/QHorizontalStackedBarSeries>
#include <QtCharts/QLineSeries>
#include <QtCharts/QValueAxis>
#include <QtGui/QPen>

#include "ui/charts/chart_style.h"
#include "ui/charts/charts.h"

namespace quantplan::ui {
namespace {

// Bar sets of the chart, in stacking order; the first three are step traffic, the rest memory.
enum Part { WeightsRead, KvRead, Activations, Resident, ActWorkspace, SamplerWorkspace, Overhead, KvBudget, NotEngine, kPartCount };

const std::array<const char*, kPartCount> kPartNames = {
    "weights read", "KV read", "activations", "resident weights", "activation workspace", "sampler workspace",
    "runtime overhead", "KV cache budget", "not given to the engine",
};

QColor part_color(int part) {
    switch (part) {
    case WeightsRead: return detail::series_color(0);
    case KvRead: return detail::series_color(1);
    case Activations: return detail::series_color(2);
    case Resident: return detail::series_color(0).darker(130);
    case ActWorkspace: return detail::series_color(4);
    case SamplerWorkspace: return detail::series_color(7);
    case Overhead: return detail::series_color(8);
    case KvBudget: return detail::series_color(1).darker(115);
    default: return QColor(0xDD, 0xDD, 0xDD);
    }
}

double gb(std::uint64_t bytes) { return static_cast<double>(bytes) / detail::kBytesPerGb; }

}  // namespace

QChart* make_memory_chart(const PlanResult& plan, const MemoryChartOptions& options) {
    const auto& q = plan.request;
    const QString title = !options.title.isEmpty()
                              ? options.title
                              : QStringLiteral("%1 on %2: memory per GPU (context %3, batch %4, KV %5)")
                                    .arg(detail::qstr(q.model.name), detail::qstr(q.gpu.name))
                                    .arg(q.workload.context_tokens)
                                    .arg(q.workload.batch)
                                    .arg(detail::qstr(kv_format_name(q.workload.kv)));
    QChart* chart = detail::new_chart(title);
    // Nine bar sets: a legend on the right keeps their names whole.
    chart->legend()->setAlignment(Qt::AlignRight);
    const bool step = options.view != MemoryChartView::Budget;
    const bool budget = options.view != MemoryChartView::StepBytes;

    // Rows top to bottom; a horizontal bar chart draws its first category at the bottom, so the
    // rows are appended in reverse below.
    struct Row {
        QString label;
        std::array<double, kPartCount> values{};
    };
    std::vector<Row> rows;
    double max_gb = 0;
    for (const SchemeResult& r : plan.schemes) {
        const QString name = detail::qstr(scheme_name(r.costs.scheme));
        if (step) {
            Row row;
            row.label = QStringLiteral("%1 step (B=%2)").arg(name).arg(r.decode.batch);
            row.values[WeightsRead] = gb(r.decode.weight_bytes);
            row.values[KvRead] = gb(r.decode.kv_bytes);
            row.values[Activations] = gb(r.decode.activation_bytes);
            rows.push_back(row);
        }
        if (budget) {
            const Admission& a = r.admission;
            Row row;
            row.label = a.fits ? QStringLiteral("%1 memory (max %2 seq)").arg(name).arg(a.max_sequences)
                               : QStringLiteral("%1 memory (does not fit)").arg(name);
            row.values[Resident] = gb(a.weight_bytes);
            row.values[ActWorkspace] = gb(a.activation_workspace_bytes);
            row.values[SamplerWorkspace] = gb(a.sampler_workspace_bytes);
            row.values[Overhead] = gb(a.runtime_overhead_bytes);
            row.values[KvBudget] = a.budget_bytes > 0 ? gb(static_cast<std::uint64_t>(a.budget_bytes)) : 0.0;
            row.values[NotEngine] = a.usable_memory_bytes > a.engine_memory_bytes ? gb(a.usable_memory_bytes - a.engine_memory_bytes) : 0.0;
            rows.push_back(row);
        }
    }
    std::reverse(rows.begin(), rows.end());

    auto* bars = new QHorizontalStackedBarSeries();
    bars->setBarWidth(0.7);
    for (int part = 0; part < kPartCount; ++part) {
        if ((part <= Activations && !step) || (part > Activations && !budget)) continue;
        auto* set = new QBarSet(QString::fromLatin1(kPartNames[static_cast<std::size_t>(part)]));
        set->setColor(part_color(part));
        set->setBorderColor(part_color(part));
        for (const Row& row : rows) set->append(row.values[static_cast<std::size_t>(part)]);
        bars->append(set);
    }
    QStringList categories;
    for (const Row& row : rows) {
        categories << row.label;
        double total = 0;
        for (double v : row.values) total += v;
        max_gb = std::max(max_gb, total);
    }
    const double usable_gb = gb(q.gpu.memory_usable_bytes);
    if (budget) max_gb = std::max(max_gb, usable_gb);

    auto* y_axis = new QBarCategoryAxis();
    y_axis->append(categories);
    if (categories.size() > 12) {
        // Seven schemes or more (a model that adds `native`): a smaller font keeps every label
        // readable instead of elided.
        QFont font = y_axis->labelsFont();
        font.setPointSizeF(std::max(6.0, font.pointSizeF() * 12.0 / static_cast<double>(categories.size())));
        y_axis->setLabelsFont(font);
    }
    auto* x_axis = new QValueAxis();
    x_axis->setTitleText(QStringLiteral("GB (1e9 bytes) per GPU"));
    x_axis->setRange(0, max_gb > 0 ? max_gb * 1.05 : 1.0);
    x_axis->applyNiceNumbers();
    x_axis->setLabelFormat(QStringLiteral("%g"));
    chart->addAxis(x_axis, Qt::AlignBottom);
    chart->addAxis(y_axis, Qt::AlignLeft);
    detail::add_series(chart, bars, {x_axis, y_axis});

    if (budget && usable_gb > 0) {
        auto* usable = new QLineSeries();
        usable->setName(QStringLiteral("usable GPU memory"));
        usable->append(usable_gb, -0.5);
        usable->append(usable_gb, static_cast<double>(categories.size()) - 0.5);
        usable->setPen(QPen(QColor(0xC0, 0x00, 0x00), 2.0, Qt::DashLine));
        detail::add_series(chart, usable, {x_axis, y_axis});
    }
    return chart;
}

}  // namespace quantplan::ui
