"""Run history: SQLAlchemy tables, Alembic migrations, the store and exporters.

Import the submodules directly (`stripewise.history.database`, `.store`, `.export`): this
package module stays empty so opening the database does not pay for the ORM or Alembic.
"""
