import unittest

from shop import orders, report, users


class HiddenRenameTest(unittest.TestCase):
    def test_new_name_everywhere(self):
        self.assertEqual(users.get_user(2), "grace")
        self.assertEqual(orders.order_label(1, "pie"), "pie for ada")
        self.assertEqual(report.greeting(1), "Hello, ada!")
        self.assertFalse(hasattr(users, "get_" + "usr"))
