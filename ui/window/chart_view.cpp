#include "ui/window/chart_view.h"

#include <memory>

#include <QtCharts/QAbstractAxis>
#include <QtCharts/QAbstractBarSeries>
#include <QtCharts/QBarCategoryAxis>
#include <QtCharts/QBarSet>
#include <QtCharts/QLegend>
#include <QtCharts/QLogValueAxis>
#include <QtCharts/QScatterSeries>
#include <QtCharts/QValueAxis>
#include <QtCharts/QXYSeries>
#include <QtGui/QContextMenuEvent>
#include <QtGui/QCursor>
#include <QtGui/QMouseEvent>
#include <QtWidgets/QApplication>
#include <QtWidgets/QMenu>
#include <QtWidgets/QToolTip>

namespace quantplan::ui {
namespace {

QFont scaled(QFont font, double factor) {
    if (font.pointSizeF() > 0) font.setPointSizeF(font.pointSizeF() * factor);
    else if (font.pixelSize() > 0) font.setPixelSize(static_cast<int>(font.pixelSize() * factor + 0.5));
    return font;
}

// True when `a` and `b` are objects of the same class.
bool same_class(const QObject* a, const QObject* b) { return a->metaObject() == b->metaObject(); }

// The indexes of `series`' attached axes among `chart`'s axes.
QList<int> axis_indexes(const QChart* chart, QAbstractSeries* series) {
    QList<int> out;
    const QList<QAbstractAxis*> axes = chart->axes();
    for (QAbstractAxis* a : series->attachedAxes()) out << static_cast<int>(axes.indexOf(a));
    return out;
}

bool axis_supported(const QAbstractAxis* a) {
    return qobject_cast<const QLogValueAxis*>(a) || qobject_cast<const QValueAxis*>(a) || qobject_cast<const QBarCategoryAxis*>(a);
}

bool same_structure(const QChart* target, const QChart* source) {
    const QList<QAbstractAxis*> ta = target->axes(), sa = source->axes();
    const QList<QAbstractSeries*> ts = target->series(), ss = source->series();
    if (ta.size() != sa.size() || ts.size() != ss.size()) return false;
    for (qsizetype i = 0; i < ta.size(); ++i)
        if (!same_class(ta[i], sa[i]) || ta[i]->alignment() != sa[i]->alignment() || !axis_supported(ta[i])) return false;
    for (qsizetype i = 0; i < ts.size(); ++i) {
        if (!same_class(ts[i], ss[i]) || axis_indexes(target, ts[i]) != axis_indexes(source, ss[i])) return false;
        // The chart builders hide a legend entry by structure (a helper series) or because its
        // series is empty; with the same emptiness the target's legend is already right.
        if (auto* tx = qobject_cast<QXYSeries*>(ts[i])) {
            if ((tx->count() == 0) != (qobject_cast<QXYSeries*>(ss[i])->count() == 0)) return false;
            continue;
        }
        auto* tb = qobject_cast<QAbstractBarSeries*>(ts[i]);
        auto* sb = qobject_cast<QAbstractBarSeries*>(ss[i]);
        if (!tb || !sb || tb->count() != sb->count()) return false;
        for (int j = 0; j < tb->count(); ++j)
            if (tb->barSets().at(j)->count() != sb->barSets().at(j)->count()) return false;
    }
    return true;
}

// Assigns through `set` only when the value differs: every axis setter relays the chart out and
// re-shapes its labels, even for the value it already has, and that is most of an update's cost.
template <class Object, class Value, class Setter>
void set_if_changed(Object* object, const Value& current, const Value& wanted, Setter set) {
    if (!(current == wanted)) (object->*set)(wanted);
}

void copy_axis(QAbstractAxis* t, QAbstractAxis* s) {
    set_if_changed(t, t->titleText(), s->titleText(), &QAbstractAxis::setTitleText);
    set_if_changed(t, t->isVisible(), s->isVisible(), &QAbstractAxis::setVisible);
    if (auto* tl = qobject_cast<QLogValueAxis*>(t)) {
        auto* sl = qobject_cast<QLogValueAxis*>(s);
        set_if_changed(tl, tl->base(), sl->base(), &QLogValueAxis::setBase);
        set_if_changed(tl, tl->labelFormat(), sl->labelFormat(), &QLogValueAxis::setLabelFormat);
        set_if_changed(tl, tl->minorTickCount(), sl->minorTickCount(), &QLogValueAxis::setMinorTickCount);
        if (tl->min() != sl->min() || tl->max() != sl->max()) tl->setRange(sl->min(), sl->max());
    } else if (auto* tv = qobject_cast<QValueAxis*>(t)) {
        auto* sv = qobject_cast<QValueAxis*>(s);
        set_if_changed(tv, tv->labelFormat(), sv->labelFormat(), &QValueAxis::setLabelFormat);
        set_if_changed(tv, tv->tickCount(), sv->tickCount(), &QValueAxis::setTickCount);
        set_if_changed(tv, tv->minorTickCount(), sv->minorTickCount(), &QValueAxis::setMinorTickCount);
        if (tv->min() != sv->min() || tv->max() != sv->max()) tv->setRange(sv->min(), sv->max());
    } else if (auto* tc = qobject_cast<QBarCategoryAxis*>(t)) {
        auto* sc = qobject_cast<QBarCategoryAxis*>(s);
        if (tc->categories() != sc->categories()) {
            tc->clear();
            tc->append(sc->categories());
        }
    }
}

void copy_series(QAbstractSeries* t, QAbstractSeries* s) {
    set_if_changed(t, t->name(), s->name(), &QAbstractSeries::setName);
    set_if_changed(t, t->isVisible(), s->isVisible(), &QAbstractSeries::setVisible);
    set_if_changed(t, t->opacity(), s->opacity(), &QAbstractSeries::setOpacity);
    if (auto* tx = qobject_cast<QXYSeries*>(t)) {
        auto* sx = qobject_cast<QXYSeries*>(s);
        set_if_changed(tx, tx->pen(), sx->pen(), &QXYSeries::setPen);
        set_if_changed(tx, tx->brush(), sx->brush(), &QXYSeries::setBrush);
        set_if_changed(tx, tx->pointsVisible(), sx->pointsVisible(), &QXYSeries::setPointsVisible);
        set_if_changed(tx, tx->pointLabelsFormat(), sx->pointLabelsFormat(), &QXYSeries::setPointLabelsFormat);
        set_if_changed(tx, tx->pointLabelsVisible(), sx->pointLabelsVisible(), &QXYSeries::setPointLabelsVisible);
        set_if_changed(tx, tx->pointLabelsClipping(), sx->pointLabelsClipping(), &QXYSeries::setPointLabelsClipping);
        set_if_changed(tx, tx->pointLabelsColor(), sx->pointLabelsColor(), &QXYSeries::setPointLabelsColor);
        if (auto* tsc = qobject_cast<QScatterSeries*>(t)) {
            auto* ssc = qobject_cast<QScatterSeries*>(s);
            set_if_changed(tsc, tsc->markerShape(), ssc->markerShape(), &QScatterSeries::setMarkerShape);
            set_if_changed(tsc, tsc->markerSize(), ssc->markerSize(), &QScatterSeries::setMarkerSize);
        }
        if (tx->points() != sx->points()) tx->replace(sx->points());
        if (tx->pointsConfiguration() != sx->pointsConfiguration()) tx->setPointsConfiguration(sx->pointsConfiguration());
        return;
    }
    auto* tb = qobject_cast<QAbstractBarSeries*>(t);
    auto* sb = qobject_cast<QAbstractBarSeries*>(s);
    set_if_changed(tb, tb->isLabelsVisible(), sb->isLabelsVisible(), &QAbstractBarSeries::setLabelsVisible);
    set_if_changed(tb, tb->labelsFormat(), sb->labelsFormat(), &QAbstractBarSeries::setLabelsFormat);
    for (int j = 0; j < tb->count(); ++j) {
        QBarSet* ts = tb->barSets().at(j);
        QBarSet* ss = sb->barSets().at(j);
        set_if_changed(ts, ts->label(), ss->label(), &QBarSet::setLabel);
        set_if_changed(ts, ts->brush(), ss->brush(), &QBarSet::setBrush);
        set_if_changed(ts, ts->pen(), ss->pen(), &QBarSet::setPen);
        set_if_changed(ts, ts->labelColor(), ss->labelColor(), &QBarSet::setLabelColor);
        for (int k = 0; k < ts->count(); ++k)
            if (ts->at(k) != ss->at(k)) ts->replace(k, ss->at(k));
    }
}

}  // namespace

bool sync_chart(QChart* target, QChart* source) {
    if (!target || !source || !same_structure(target, source)) return false;
    set_if_changed(target, target->title(), source->title(), &QChart::setTitle);
    const QList<QAbstractAxis*> ta = target->axes(), sa = source->axes();
    for (qsizetype i = 0; i < ta.size(); ++i) copy_axis(ta[i], sa[i]);
    const QList<QAbstractSeries*> ts = target->series(), ss = source->series();
    for (qsizetype i = 0; i < ts.size(); ++i) copy_series(ts[i], ss[i]);
    return true;
}

void scale_chart_fonts(QChart* chart, double factor) {
    if (!chart) return;
    // Base fonts are remembered on the chart the first time so that scaling never compounds.
    const auto base = [chart](const char* key, const QFont& current) {
        const QVariant stored = chart->property(key);
        if (stored.isValid()) return stored.value<QFont>();
        chart->setProperty(key, current);
        return current;
    };
    chart->setTitleFont(scaled(base("qp_title_font", chart->titleFont()), factor));
    chart->legend()->setFont(scaled(base("qp_legend_font", chart->legend()->font()), factor));
    int i = 0;
    for (QAbstractAxis* axis : chart->axes()) {
        const QByteArray labels_key = "qp_axis_labels_" + QByteArray::number(i);
        const QByteArray title_key = "qp_axis_title_" + QByteArray::number(i);
        axis->setLabelsFont(scaled(base(labels_key.constData(), axis->labelsFont()), factor));
        axis->setTitleFont(scaled(base(title_key.constData(), axis->titleFont()), factor));
        ++i;
    }
}

ChartView::ChartView(QWidget* parent) : QChartView(parent) {
    setRenderHint(QPainter::Antialiasing);
    setMouseTracking(true);
    setMinimumSize(320, 220);
}

ChartView::~ChartView() {
    QChart* old = chart();
    // QChartView does not delete a chart it was given; this view owns the one it shows.
    setChart(new QChart);
    delete old;
}

void ChartView::replaceChart(QChart* chart) {
    QChart* old = this->chart();
    scale_chart_fonts(chart, font_scale_);
    setChart(chart);
    delete old;
}

void connect_bar_tooltips(ChartView* view) {
    QChart* chart = view->chart();
    for (QAbstractSeries* s : chart->series()) {
        auto* bars = qobject_cast<QAbstractBarSeries*>(s);
        if (!bars) continue;
        for (QBarSet* set : bars->barSets()) {
            // Categories are read when hovered: an in-place update (sync_chart) may rename them.
            QObject::connect(set, &QBarSet::hovered, view, [view, set](bool on, int index) {
                QStringList categories;
                if (view->chart())
                    for (QAbstractAxis* axis : view->chart()->axes())
                        if (auto* c = qobject_cast<QBarCategoryAxis*>(axis)) categories = c->categories();
                if (!on || index < 0 || index >= categories.size()) {
                    QToolTip::hideText();
                    return;
                }
                QToolTip::showText(QCursor::pos(),
                                   QStringLiteral("%1\n%2: %3 GB").arg(categories.at(index), set->label(), QString::number(set->at(index), 'f', 3)),
                                   view);
            });
        }
    }
}

bool ChartView::showChart(QChart* chart) {
    std::unique_ptr<QChart> fresh(chart);
    if (sync_chart(this->chart(), fresh.get())) return false;
    replaceChart(fresh.release());
    return true;
}

void ChartView::setFontScale(double factor) {
    font_scale_ = factor;
    scale_chart_fonts(chart(), factor);
}

QString ChartView::hoverTextAt(const QPoint& view_position) const {
    if (!hover_text_ || !chart() || chart()->series().isEmpty()) return {};
    const QPointF scene = mapToScene(view_position);
    const QPointF item = chart()->mapFromScene(scene);
    if (!chart()->plotArea().contains(item)) return {};
    return hover_text_(chart()->mapToValue(item, chart()->series().constFirst()));
}

void ChartView::mouseMoveEvent(QMouseEvent* event) {
    const QString text = hoverTextAt(event->position().toPoint());
    if (text.isEmpty()) QToolTip::hideText();
    else QToolTip::showText(event->globalPosition().toPoint(), text, this);
    QChartView::mouseMoveEvent(event);
}

void ChartView::contextMenuEvent(QContextMenuEvent* event) {
    QMenu menu(this);
    menu.addAction(tr("Export chart as PNG or SVG…"), this, &ChartView::exportRequested);
    menu.exec(event->globalPos());
}

}  // namespace quantplan::ui
