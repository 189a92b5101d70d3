"""Asset group `report`: the shareable audit report."""
