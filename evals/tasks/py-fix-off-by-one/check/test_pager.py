import unittest

from pager import page


class PageTest(unittest.TestCase):
    def test_first_page(self):
        self.assertEqual(page(list(range(10)), 1, 3), [0, 1, 2])

    def test_last_page(self):
        self.assertEqual(page(list(range(10)), 4, 3), [9])

    def test_past_the_end(self):
        self.assertEqual(page(list(range(10)), 5, 3), [])
