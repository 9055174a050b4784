#include "ui/window/check_dialog.h"

#include <algorithm>
#include <cstdlib>

#include <QtCore/QFile>
#include <QtCore/QStringList>
#include <QtWidgets/QAbstractItemView>
#include <QtWidgets/QHeaderView>
#include <QtWidgets/QLabel>
#include <QtWidgets/QTableWidget>
#include <QtWidgets/QVBoxLayout>

#include "core/base/error.h"

namespace quantplan::ui {

check::CheckResult run_window_check(const QString& path, const check::CheckInputs& in, const std::string& fallback_gpu,
                                    const std::string& fallback_model) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) throw Error("--check", "cannot read " + path.toStdString());
    if (file.size() > static_cast<qint64>(check::kMaxLogBytes)) throw Error("--check", path.toStdString() + " is larger than 64 MiB");
    const std::string text = file.readAll().toStdString();
    const bool bench = check::looks_like_json(text);
    const auto run = [&](const check::CheckOptions& o) {
        return bench ? check::check_bench_result(check::read_bench_result(text, path.toStdString()), o, in)
                     : check::check_startup_log(check::read_startup_log(text, path.toStdString()), o, in);
    };
    check::CheckResult r = run({});
    // What the file does not name, the window's controls stand in for.
    check::CheckOptions o;
    if (r.identified.gpu.empty()) o.gpu = fallback_gpu;
    if (r.identified.model.empty()) o.model = fallback_model;
    if (o.gpu || o.model) {
        r = run(o);
        if (o.gpu) r.notes.push_back("GPU taken from the window's GPU control: " + *o.gpu);
        if (o.model) r.notes.push_back("model taken from the window's model control: " + *o.model);
    }
    return r;
}

std::vector<MeasuredStepPoint> check_step_points(const check::CheckResult& r) {
    std::vector<MeasuredStepPoint> out;
    for (const check::CheckRow& row : r.rows)
        if (row.quantity == "tpot_s_mean" && !r.identified.scheme.empty()) {
            MeasuredStepPoint p;
            p.scheme = r.identified.scheme;
            p.kernel = "check";
            for (const std::string& n : r.notes)
                if (n.rfind("priced at concurrency ", 0) == 0) p.batch = std::atoll(n.c_str() + 22);
            p.batch = std::max<std::int64_t>(p.batch, 1);
            p.measured_step_s = row.logged;
            p.predicted_step_s = row.predicted.value_or(0);
            p.admitted = true;
            out.push_back(p);
        }
    return out;
}

CheckDialog::CheckDialog(QWidget* parent) : QDialog(parent) {
    setObjectName(QStringLiteral("checkDialog"));
    auto* layout = new QVBoxLayout(this);
    auto* summary = new QLabel(this);
    summary->setObjectName(QStringLiteral("checkSummary"));
    summary->setWordWrap(true);
    auto* table = new QTableWidget(this);
    table->setObjectName(QStringLiteral("checkTable"));
    table->setColumnCount(4);
    table->setHorizontalHeaderLabels({tr("quantity"), tr("logged"), tr("predicted"), tr("error")});
    table->horizontalHeader()->setStretchLastSection(true);
    table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    auto* footer = new QLabel(this);
    footer->setObjectName(QStringLiteral("checkFooter"));
    footer->setWordWrap(true);
    layout->addWidget(summary);
    layout->addWidget(table, 1);
    layout->addWidget(footer);
    resize(720, 480);
}

void CheckDialog::showResult(const check::CheckResult& r, const QString& file_name) {
    const check::Identified& id = r.identified;
    setWindowTitle(tr("Check: %1").arg(file_name));
    findChild<QLabel*>(QStringLiteral("checkSummary"))
        ->setText(tr("%1 %2 [profile %3], model %4 (%5), GPU %6, TP %7, max_model_len %8")
                      .arg(QString::fromStdString(id.engine), QString::fromStdString(id.version.empty() ? "(version not named)" : id.version),
                           QString::fromStdString(id.profile), QString::fromStdString(id.model), QString::fromStdString(id.scheme),
                           QString::fromStdString(id.gpu))
                      .arg(id.tp)
                      .arg(id.max_model_len));
    auto* table = findChild<QTableWidget*>(QStringLiteral("checkTable"));
    table->setRowCount(static_cast<int>(r.rows.size()));
    const auto shown = [](double v, const std::string& unit) {
        if (unit == "bytes") return QStringLiteral("%1 GiB").arg(v / 1073741824.0, 0, 'f', 2);
        if (unit == "s") return QStringLiteral("%1 ms").arg(v * 1e3, 0, 'f', 2);
        return QString::number(v, 'g', 6);
    };
    for (int i = 0; i < static_cast<int>(r.rows.size()); ++i) {
        const check::CheckRow& row = r.rows[static_cast<std::size_t>(i)];
        table->setItem(i, 0, new QTableWidgetItem(QString::fromStdString(row.quantity)));
        table->setItem(i, 1, new QTableWidgetItem(shown(row.logged, row.unit)));
        table->setItem(i, 2, new QTableWidgetItem(row.predicted ? shown(*row.predicted, row.unit) : QStringLiteral("-")));
        table->setItem(i, 3, new QTableWidgetItem(row.error_fraction ? QStringLiteral("%1%").arg(*row.error_fraction * 100.0, 0, 'f', 1) : QStringLiteral("-")));
        if (!row.note.empty()) table->item(i, 2)->setToolTip(QString::fromStdString(row.note));
    }
    table->resizeColumnsToContents();
    QStringList footer;
    if (!r.largest_difference.empty()) footer << tr("Largest difference: %1").arg(QString::fromStdString(r.largest_difference));
    for (const std::string& u : r.unresolved) footer << tr("Not identified: %1").arg(QString::fromStdString(u));
    for (const std::string& n : r.notes) footer << QString::fromStdString(n);
    findChild<QLabel*>(QStringLiteral("checkFooter"))->setText(footer.join(QLatin1Char('\n')));
    show();
}

}  // namespace quantplan::ui
