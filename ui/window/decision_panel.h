#pragma once
// Panel e: the recommendation for the current workload and its reasons in words, the engines'
// warnings for the chosen schemes, and the ranking it came from (core's Decision, verbatim).
#include "core/plan/plan.h"
#include "ui/window/panel.h"

QT_BEGIN_NAMESPACE
class QTextBrowser;
QT_END_NAMESPACE

namespace quantplan::ui {

class RankingModel;

// The decision panel.
class DecisionPanel : public Panel {
    Q_OBJECT
public:
    explicit DecisionPanel(QWidget* parent = nullptr);

    // Shows `plan`'s decision (the text is laid out when the panel is shown).
    void setResult(const PlanResult& plan);

    // Panel: no chart; the ranking table; "decision" for exports.
    ChartView* chartView() const override { return nullptr; }
    QList<ResultTableView*> tables() const override { return {table_}; }
    QString exportName() const override { return QStringLiteral("decision"); }
    // "Copy launch command" and "Save deployment…" for the recommended scheme.
    class LaunchBar* launchBar() const { return launch_bar_; }
    // The ranking's model (tests).
    RankingModel* model() const { return model_; }
    // The decision text, laid out for the current result.
    QTextBrowser* text() {
        updateText();
        return text_;
    }

protected:
    void showEvent(QShowEvent* event) override;

private:
    // Lays the decision text out (deferred while the panel is hidden: it is the costly part).
    void updateText();

    PlanResult plan_;
    bool text_dirty_ = false;
    QTextBrowser* text_ = nullptr;
    ResultTableView* table_ = nullptr;
    class LaunchBar* launch_bar_ = nullptr;
    RankingModel* model_ = nullptr;
};

// The decision as HTML: workload, regime, recommendation, reasons, warnings and scheme notes.
QString decision_html(const PlanResult& plan);

}  // namespace quantplan::ui
