import unittest

from duration import parse_duration


class DurationTest(unittest.TestCase):
    def test_units(self):
        self.assertEqual(parse_duration("45s"), 45)
        self.assertEqual(parse_duration("1h30m"), 5400)
        self.assertEqual(parse_duration("2h5m10s"), 7510)

    def test_rejects(self):
        for text in ("", "5x", "m1"):
            with self.assertRaises(ValueError):
                parse_duration(text)
