import unittest

from shop.orders import order_label
from shop.report import greeting
from shop.users import get_usr


class ShopTest(unittest.TestCase):
    def test_lookup(self):
        self.assertEqual(get_usr(1), "ada")

    def test_label(self):
        self.assertEqual(order_label(2, "tea"), "tea for grace")

    def test_greeting(self):
        self.assertEqual(greeting(3), "Hello, stranger!")
