#define BOOST_TEST_MODULE quantplan_app
#include <boost/test/unit_test.hpp>
