import unittest

from stats import mean


class HiddenMeanTest(unittest.TestCase):
    def test_empty_is_none(self):
        self.assertIsNone(mean([]))

    def test_still_averages(self):
        self.assertEqual(mean([2, 4]), 3)
