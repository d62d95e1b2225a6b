from shop.users import get_usr


def order_label(user_id, item):
    return f"{item} for {get_usr(user_id)}"
