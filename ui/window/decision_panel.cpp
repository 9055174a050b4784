#include "ui/window/decision_panel.h"

#include <algorithm>

#include <QtWidgets/QSplitter>
#include <QtWidgets/QTextBrowser>
#include <QtWidgets/QVBoxLayout>

#include "core/scheme/scheme.h"
#include "core/base/error.h"
#include "ui/window/glossary.h"
#include "ui/window/launch_bar.h"
#include "ui/window/table_models.h"

namespace quantplan::ui {
namespace {

QString esc(const std::string& s) { return QString::fromStdString(s).toHtmlEscaped(); }

}  // namespace

QString decision_html(const PlanResult& plan) {
    const Decision& d = plan.decision;
    const Workload& w = plan.request.workload;
    QString html;
    html += QStringLiteral("<p>%1 on %2, batch %3, context %4, KV %5, TP %6, %7 profile, goal: %8.</p>")
                .arg(esc(plan.request.model.name), esc(plan.request.gpu.name))
                .arg(w.batch)
                .arg(w.context_tokens)
                .arg(esc(kv_format_name(w.kv)))
                .arg(w.tensor_parallel)
                .arg(esc(plan.request.efficiency.name), QString::fromUtf8(goal_name(plan.request.goal.goal)));
    html += QStringLiteral("<p title=\"%1\">Regime: <b>%2</b></p>").arg(glossary("regime").toHtmlEscaped(), esc(d.regime));
    if (d.recommendation.empty())
        html += QStringLiteral("<h2>No recommendation: every scheme is vetoed or does not fit.</h2>");
    else
        html += QStringLiteral("<h2>Recommended: %1</h2>").arg(esc(d.recommendation));
    if (!d.reasons.empty()) {
        html += QStringLiteral("<h3>Why</h3><ol>");
        for (const std::string& r : d.reasons) html += QStringLiteral("<li>%1</li>").arg(esc(r));
        html += QStringLiteral("</ol>");
    }
    if (!d.warnings.empty()) {
        html += QStringLiteral("<h3>Engine warnings</h3><ul>");
        for (const std::string& r : d.warnings) html += QStringLiteral("<li>%1</li>").arg(esc(r));
        html += QStringLiteral("</ul>");
    }
    QString notes;
    for (const SchemeResult& r : plan.schemes) {
        if (!r.costs.note.empty()) notes += QStringLiteral("<li><b>%1</b>: %2</li>").arg(esc(scheme_name(r.costs.scheme)), esc(r.costs.note));
        if (!r.admission.fits)
            notes += QStringLiteral("<li><b>%1</b> does not fit: %2</li>").arg(esc(scheme_name(r.costs.scheme)), esc(r.admission.reason));
    }
    if (!notes.isEmpty()) html += QStringLiteral("<h3>Scheme notes</h3><ul>%1</ul>").arg(notes);
    // Under the engine profile: each scheme's bands and the measured corpus points nearest to it.
    if (plan.request.engine && plan.request.engine->price_steps) {
        const engine::EngineSetup& e = *plan.request.engine;
        html += QStringLiteral("<h3>Engine profile and evidence</h3><p>%1 (%2), fitted on corpus %3; bands are p10-p90 of the fit's "
                               "leave-one-out errors (docs/fidelity.md).</p><table border=\"1\" cellspacing=\"0\" cellpadding=\"3\">"
                               "<tr><th>scheme</th><th>tokens/s (p10-p90)</th><th>nearest measured points: measured / fit predicts</th></tr>")
                    .arg(esc(e.profile.title), esc(e.profile.id), esc(e.corpus_checksum));
        for (const SchemeResult& r : plan.schemes) {
            QString band = QString::number(r.throughput_tokens_per_s, 'f', 0);
            if (r.bands && r.bands->has_step)
                band += QStringLiteral(" (%1-%2)%3")
                            .arg(r.bands->throughput_tokens_per_s.low, 0, 'f', 0)
                            .arg(r.bands->throughput_tokens_per_s.high, 0, 'f', 0)
                            .arg(r.bands->covered ? QString() : QStringLiteral("<br><i>%1</i>").arg(esc(r.bands->coverage_note)));
            QString points;
            for (const engine::EvidencePoint& p : r.evidence)
                points += QStringLiteral("%1 %2, %3 on %4 (%5 %6): %7 / %8<br>")
                              .arg(esc(p.model), esc(p.scheme), esc(p.metric), esc(p.gpu), esc(p.engine), esc(p.engine_version))
                              .arg(p.measured, 0, 'g', 4)
                              .arg(p.fitted, 0, 'g', 4);
            html += QStringLiteral("<tr><td>%1</td><td>%2</td><td>%3</td></tr>")
                        .arg(esc(scheme_name(r.costs.scheme)), band, points.isEmpty() ? QStringLiteral("none near") : points);
        }
        html += QStringLiteral("</table>");
    }
    return html;
}

DecisionPanel::DecisionPanel(QWidget* parent) : Panel(parent) {
    text_ = new QTextBrowser(this);
    text_->setObjectName(QStringLiteral("decisionText"));
    text_->setOpenLinks(false);
    model_ = new RankingModel(this);
    table_ = new ResultTableView(this);
    table_->setModel(model_);
    table_->setObjectName(QStringLiteral("rankingTable"));
    auto* split = new QSplitter(Qt::Vertical, this);
    split->addWidget(text_);
    split->addWidget(table_);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    launch_bar_ = new LaunchBar(this);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(split);
    layout->addWidget(launch_bar_);
}

void DecisionPanel::setResult(const PlanResult& plan) {
    plan_ = plan;
    text_dirty_ = true;
    if (isVisible()) updateText();
    model_->setResult(plan.decision, plan.request.goal.goal);
    // The launch of the recommended scheme at the plan's GPU, TP and context.
    const std::string engine = plan.request.engine ? plan.request.engine->choice.engine : std::string("vllm");
    const std::string version = plan.request.engine ? plan.request.engine->choice.version_asked : std::string();
    launch_bar_->setProvider(engine, [plan, version](const launch::LaunchData& data) {
        const std::string& pick = plan.decision.recommendation;
        const auto it = std::find_if(plan.schemes.begin(), plan.schemes.end(), [&](const SchemeResult& r) { return scheme_name(r.costs.scheme) == pick; });
        if (pick.empty() || it == plan.schemes.end()) throw Error("launch", "no recommended scheme to launch");
        if (!it->admission.fits) throw Error("launch", pick + " does not fit: " + it->admission.reason);
        return std::vector<launch::Launch>{launch::make_launch(
            launch::launch_request(plan.request, *it, data, plan.request.model.name, version, plan.request.workload.context_tokens, 1, false), data.args,
            data.deployment, data.published, data.gpus)};
    });
}

void DecisionPanel::updateText() {
    if (!text_dirty_) return;
    text_dirty_ = false;
    text_->setHtml(decision_html(plan_));
}

void DecisionPanel::showEvent(QShowEvent* event) {
    Panel::showEvent(event);
    updateText();
}

}  // namespace quantplan::ui
