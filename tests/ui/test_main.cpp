// The ui test executable: one QApplication for every test case, on the offscreen platform
// (ctest sets QT_QPA_PLATFORM=offscreen; run by hand without it, the platform is forced here so
// that the tests never need a display).
#define BOOST_TEST_MODULE quantplan_ui
#ifdef QUANTPLAN_BOOST_TEST_HEADER_ONLY  // no Boost.Test library: the framework compiled in (scripts/gpu-deps)
#include <boost/test/included/unit_test.hpp>
#else
#include <boost/test/unit_test.hpp>
#endif

#include <clocale>

#include <QtWidgets/QApplication>

namespace {

// Creates the application before the first test case and destroys it after the last.
struct QtApplicationFixture {
    QtApplicationFixture() {
        if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
        app = new QApplication(argc, argv);
        // QApplication sets the C locale from the environment; the report's files must not follow it.
        std::setlocale(LC_NUMERIC, "C");
    }
    ~QtApplicationFixture() { delete app; }

    int argc = 1;
    char name[16] = "test_ui";
    char* argv[2] = {name, nullptr};
    QApplication* app = nullptr;
};

}  // namespace

BOOST_TEST_GLOBAL_FIXTURE(QtApplicationFixture);
