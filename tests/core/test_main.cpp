#define BOOST_TEST_MODULE quantplan_core
#include <boost/test/unit_test.hpp>
