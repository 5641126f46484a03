"""Energy, power and area accounting (:func:`account`) over the structures a design lists."""

from rfmodel.energy.accounting import Structure, account

__all__ = ["Structure", "account"]
